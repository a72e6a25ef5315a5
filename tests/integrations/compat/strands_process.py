"""One phase of a durable Strands run in its own process (the CLI's store, through SIGNOFF_DB, or a
server through SIGNOFF_URL), the agent's session in a FileSessionManager folder.

    python strands_process.py start|resume|replay DIR

`start` runs until paused (session in DIR/sessions, copied to DIR/stale); `resume` runs the agent
on; `replay` resumes the stale copy again (as if the resuming process had died before its
session was saved). Prints one JSON line: paused, the requests waited for, what the model was
shown last (its tool results), the final text.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from strands.session import FileSessionManager

from signoff import RuleSet
from signoff.integrations.strands import SIGNOFF_KEY, SignoffHooks
from tests.integrations.compat.strands_support import USER, Scripted, final_text, make_agent, make_tools
from tests.integrations.ledger import Ledger

THREAD = "nightly-1"
RULES = RuleSet.model_validate({"tools": {"transfer": {"requires_approval": True}}})


def main(phase: str, folder: Path) -> None:
    hooks = SignoffHooks(rules=RULES)
    tools = make_tools(Ledger(folder / "ledger.jsonl"))
    model = Scripted(turns=1 if phase == "start" else 0)
    sessions = folder / ("stale" if phase == "replay" else "sessions")
    manager = FileSessionManager(session_id=THREAD, storage_dir=str(sessions))
    agent = make_agent(model, tools, [hooks], session_manager=manager)
    if phase == "start":
        result = agent(USER)
        shutil.copytree(sessions, folder / "stale")
        waiting = [interrupt.reason[SIGNOFF_KEY]["request_id"] for interrupt in result.interrupts]
        out = {"paused": result.stop_reason == "interrupt", "waiting": waiting, "text": None}
    else:
        resumed = hooks.resume(agent)
        waiting = [pending.request_id for pending in resumed.pending]
        text = final_text(resumed.result) if resumed.result is not None else None
        out = {"paused": resumed.paused, "waiting": waiting, "text": text}
    print(json.dumps({**out, "seen": model.seen}))


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
