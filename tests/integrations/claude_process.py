"""A Claude Agent SDK agent in its own process, waiting inside its run for signoff's decision
(the CLI's store through SIGNOFF_DB, or a server through SIGNOFF_URL), over the scripted CLI.

    python claude_process.py DIR

Runs one turn of session sess-1 (transfer, then lookup; transcript DIR/transcript.jsonl, ledger
DIR/ledger.jsonl) and prints one JSON line: what the model was given for each call, and whether
the turn was interrupted. Run again, it is the session resumed: the CLI asks about the same calls.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from signoff import RuleSet
from signoff.integrations.claude_agent_sdk import SignoffPermissions
from tests.integrations.claude_support import LOOKUP, TRANSFER, ScriptedCLI, make_tools, run_turn, seen_rows
from tests.integrations.ledger import Ledger

RULES = RuleSet.model_validate({"tools": {"mcp__pay__transfer": {"requires_approval": True}}})


def main(folder: Path) -> None:
    permissions = SignoffPermissions(rules=RULES, agent="payments")
    cli = ScriptedCLI(
        [TRANSFER, LOOKUP],
        make_tools(Ledger(folder / "ledger.jsonl")),
        allowed_tools=frozenset({LOOKUP.name}),
        transcript=folder / "transcript.jsonl",
    )
    asyncio.run(run_turn(cli, permissions.options(allowed_tools=[LOOKUP.name])))
    print(json.dumps({"seen": seen_rows(cli), "interrupted": cli.interrupted}))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
