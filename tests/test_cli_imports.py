"""The command line loads what a command needs and nothing more: `signoff --version` and a local
`signoff pending` never import the server, the HTTP client, the MCP SDK, the channels' libraries,
the CEL engine or jsonschema (each cost up to a second of CPU at every start when they did)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("fastapi", "uvicorn", "starlette", "httpx", "mcp", "cel", "prompt_toolkit", "jsonschema", "jinja2")
PROBE = """
import json, sys
sys.argv = ["signoff", *json.loads(sys.argv[1])]
from signoff.cli import main
try:
    main()
except SystemExit:
    pass
print("\\nLOADED " + json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""


def loaded_by(*argv: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(argv)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    line = done.stdout.rsplit("LOADED ", 1)[1]
    return set(json.loads(line))


@pytest.mark.parametrize("argv", [("--version",), ("pending",), ("show", "req_unknown")])
def test_a_local_command_loads_no_server_client_or_engine(argv: tuple[str, ...], tmp_path: Path) -> None:
    loaded = loaded_by("--db", f"sqlite:///{tmp_path / 'signoff.db'}", *argv)
    assert "signoff" in loaded
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))


def test_a_command_loads_what_it_needs() -> None:
    assert {"fastapi", "starlette"} <= loaded_by("serve", "--help")
