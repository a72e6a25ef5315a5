"""One phase of a durable Google ADK run in its own process (the CLI's store, through SIGNOFF_DB,
or a server through SIGNOFF_URL), its session in ADK's SQLite session service.

    python adk_process.py start|resume|replay DIR

`start` runs until paused (session DIR/sessions.db, copied to DIR/stale.db); `resume` runs the
session on; `replay` resumes the stale copy again (as if the resuming process had died before
its session was saved). Prints one JSON line: paused, the requests waited for, what the model was
shown last (its tool results), the final text.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from google.adk.sessions.sqlite_session_service import SqliteSessionService

from signoff import RuleSet
from signoff.integrations.google_adk import SIGNOFF_KEY, SignoffPlugin
from tests.integrations.adk_support import (
    APP,
    USER_ID,
    Scripted,
    final_text,
    make_runner,
    make_tools,
    paused_calls,
    run_text,
)
from tests.integrations.ledger import Ledger

THREAD = "nightly-1"
RULES = RuleSet.model_validate({"tools": {"transfer": {"requires_approval": True}}})


async def main(phase: str, folder: Path) -> None:
    plugin = SignoffPlugin(rules=RULES)
    tools = make_tools(Ledger(folder / "ledger.jsonl"))
    model = Scripted(turns=1 if phase == "start" else 0)
    sessions = folder / ("stale.db" if phase == "replay" else "sessions.db")
    runner = make_runner(model, tools, SqliteSessionService(str(sessions)), [plugin])
    if phase == "start":
        await runner.session_service.create_session(app_name=APP, user_id=USER_ID, session_id=THREAD)
        events = await run_text(runner, THREAD)
        shutil.copy(sessions, folder / "stale.db")
        asked = paused_calls(events)
        waiting = [
            (call.args or {})["toolConfirmation"]["payload"][SIGNOFF_KEY]["request_id"] for call in asked
        ]
        out = {"paused": bool(asked), "waiting": waiting, "text": final_text(events)}
    else:
        resumed = await plugin.resume(runner, user_id=USER_ID, session_id=THREAD)
        waiting = [pending.request_id for pending in resumed.pending]
        out = {"paused": resumed.paused, "waiting": waiting, "text": final_text(resumed.events)}
    print(json.dumps({**out, "seen": model.seen}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2])))
