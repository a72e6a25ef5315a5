"""The command line loads what a command needs and nothing more: `signoff --version`, a local
`signoff pending`, `show` and `approve` never import the server, the HTTP client, the database
drivers, the channels' SDKs, the agent frameworks, the CEL engine, jsonschema or pydantic (each
cost up to a second of CPU at every start when they did), and `import signoff` none of those."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from signoff import Gate, Pending, RuleSet, Scope, ToolCall
from signoff.store import open_store

SERVER_AND_EXTRAS = (
    "fastapi",
    "uvicorn",
    "starlette",
    "jinja2",
    "httpx",
    "psycopg",
    "psycopg_pool",
    "slack_sdk",
    "lark_oapi",
    "mcp",
    "langchain",
    "langchain_core",
    "langgraph",
    "haystack",
    "pydantic_ai",
    "agents",
    "cel",
    "prompt_toolkit",
    "jsonschema",
)
"""Packages a local command never needs (the server, the client's HTTP stack, PostgreSQL, the
channels' and frameworks' SDKs, the rules' CEL engine)."""
HEAVY = (*SERVER_AND_EXTRAS, "pydantic", "yaml", "asyncio")
"""And those the plain commands do without: pydantic (Typer's per-parameter adapters and the
rule files' models), YAML (the rule files) and asyncio (async waiters)."""
PROBE = """
import json, sys
sys.argv = ["signoff", *json.loads(sys.argv[1])]
from signoff.cli import main
try:
    main()
except SystemExit:
    pass
print("\\nLOADED " + json.dumps(sorted(sys.modules)))
"""
ASKING = RuleSet.from_dict({"tools": {"send_email": {"requires_approval": True}}})


def loaded_by(*argv: str, probe: str = PROBE) -> set[str]:
    """The packages and modules a new process loaded to run `signoff ARGV`."""
    done = subprocess.run(
        [sys.executable, "-c", probe, json.dumps(argv)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    modules = set(json.loads(done.stdout.rsplit("LOADED ", 1)[1]))
    return modules | {name.split(".")[0] for name in modules}


def open_request(url: str) -> str:
    store = open_store(url)
    try:
        found = Gate(store, rules=ASKING).submit(
            ToolCall(name="send_email", args={"to": "bob@example.com"}, id="call-1"),
            Scope(thread_id="t1", agent="bot"),
        )
        assert isinstance(found, Pending)
        return found.request.id
    finally:
        store.close()


@pytest.mark.parametrize(
    "argv", [("--version",), ("pending",), ("pending", "--limit", "5"), ("show", "req_unknown")]
)
def test_a_local_command_loads_no_server_extra_or_pydantic(argv: tuple[str, ...], tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'signoff.db'}"
    open_request(url)
    loaded = loaded_by("--db", url, *argv)
    assert "signoff" in loaded
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))
    assert "signoff.server" not in loaded


def test_approving_locally_loads_no_server_extra_or_pydantic(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'signoff.db'}"
    request_id = open_request(url)
    loaded = loaded_by("--db", url, "approve", request_id, "--as", "alice")
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))
    store = open_store(url)
    try:
        assert store.get_request(request_id).status == "approved"  # the probe did run the command
    finally:
        store.close()


def test_explaining_loads_the_rules_but_no_server_or_extra(tmp_path: Path) -> None:
    loaded = loaded_by("--db", f"sqlite:///{tmp_path / 'signoff.db'}", "explain", "send_email")
    assert "signoff.rules.model" in loaded
    assert loaded.isdisjoint(SERVER_AND_EXTRAS), sorted(loaded & set(SERVER_AND_EXTRAS))


def test_importing_signoff_loads_none_of_the_server_store_or_extras() -> None:
    probe = 'import json, sys\nimport signoff\nprint("LOADED " + json.dumps(sorted(sys.modules)))'
    loaded = loaded_by(probe=probe)
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))
    assert {"signoff.server", "signoff.store", "signoff.gate", "signoff.client", "typer"}.isdisjoint(loaded)


def test_a_command_loads_what_it_needs() -> None:
    assert {"fastapi", "starlette"} <= loaded_by("serve", "--help")
