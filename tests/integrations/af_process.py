"""One phase of a durable Agent Framework run in its own process (the CLI's store, through
SIGNOFF_DB, or a server through SIGNOFF_URL).

    python af_process.py start|resume|replay DIR

`start` runs until paused, keeps the session in signoff's store and copies it (`to_dict`) to
DIR/session.json; `resume` continues the kept session and forgets it; `replay` resumes the stale
copy again (as if the resuming process had died before saving). Prints one JSON line: paused,
the requests waited for, what the model was shown last (its tool results), the final text.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agent_framework import AgentSession

from signoff import RuleSet
from signoff.integrations.agent_framework import SignoffApprovals
from tests.integrations.af_support import USER, ScriptedClient, make_agent, make_tools
from tests.integrations.ledger import Ledger

THREAD = "nightly-1"
RULES = RuleSet.model_validate({"tools": {"transfer": {"requires_approval": True}}})


async def main(phase: str, folder: Path) -> None:
    approvals = SignoffApprovals(rules=RULES)
    tools = make_tools(Ledger(folder / "ledger.jsonl"))
    client = ScriptedClient(turns=1 if phase == "start" else 0)
    agent = make_agent(client, tools, approvals.middleware)
    if phase == "start":
        session = agent.create_session()
        session.state["signoff"] = {"thread_id": THREAD}
        response = await agent.run(USER, session=session)
        approvals.keep(session)
        (folder / "session.json").write_text(json.dumps(session.to_dict()))
        out = {"paused": bool(response.user_input_requests), "waiting": [], "text": response.text}
        out["waiting"] = [
            r.additional_properties["signoff"]["request_id"] for r in response.user_input_requests
        ]
    else:
        if phase == "replay":
            session = AgentSession.from_dict(json.loads((folder / "session.json").read_text()))
        else:
            session = approvals.kept(THREAD)
        resumed = await approvals.resume(agent, session)
        if not resumed.paused:
            approvals.forget(THREAD)
        text = resumed.response.text if resumed.response is not None else None
        out = {"paused": resumed.paused, "waiting": [p.request_id for p in resumed.pending], "text": text}
    print(json.dumps({**out, "seen": client.seen}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2])))
