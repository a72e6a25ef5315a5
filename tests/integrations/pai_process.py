"""One phase of a durable Pydantic AI run in its own process (the CLI's store, history on disk).

    python pai_process.py start|resume|replay|wait|resume-kept DIR

`wait` runs with `SignoffApprovals(wait=True)` (and is killed while it waits); `resume-kept`
continues the messages it kept in the store. Prints one JSON line: the deferred calls, and the
parts the model was shown after its first turn.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessagesTypeAdapter
from pydantic_ai.tools import DeferredToolRequests

from signoff import Gate, ToolEntry, open_backend
from signoff.integrations.pydantic_ai import SignoffApprovals, decided_results, resume_when_decided

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.integrations.pai_support import Ledger, Script, make_toolset, shown

TURNS: dict[str, list[Any]] = {
    "start": [[("send_email", {"to": "alice", "body": "hi"}, "c1"), ("read_data", {"table": "t"}, "c2")]],
    "resume": ["done"],
    "replay": ["done again"],
}
TURNS["wait"] = TURNS["start"]
TURNS["resume-kept"] = TURNS["resume"]


def main(phase: str, folder: Path) -> None:
    gate = Gate(open_backend())  # SIGNOFF_DB, as the CLI
    gate.register_tool("send_email", ToolEntry(requires_approval=True))
    approvals = SignoffApprovals(gate, wait=phase in ("wait", "resume-kept"))
    script = Script(TURNS[phase])
    agent = Agent(
        script.model,
        toolsets=[make_toolset(Ledger(folder / "ledger.jsonl"))],
        capabilities=[approvals],
        output_type=[str, DeferredToolRequests],
    )
    saved = folder / "history.json"
    if phase == "start":
        result = agent.run_sync("mail alice", conversation_id="nightly-1")
        saved.write_bytes(result.all_messages_json())
    elif phase == "wait":
        result = agent.run_sync("mail alice", conversation_id="nightly-1")
    elif phase == "resume-kept":
        result = resume_when_decided(agent, None, approvals, thread_id="nightly-1")
    else:
        blob = saved.read_bytes()
        results = decided_results(approvals, blob)
        assert results is not None, "still undecided"
        history = ModelMessagesTypeAdapter.validate_json(blob)
        result = agent.run_sync(message_history=history, deferred_tool_results=results)
    output = result.output
    print(
        json.dumps(
            {
                "deferred": [
                    {
                        "tool_call_id": call.tool_call_id,
                        **call.args_as_dict(),
                        **output.metadata[call.tool_call_id],
                    }
                    for call in output.approvals
                ]
                if isinstance(output, DeferredToolRequests)
                else [],
                "output": output if isinstance(output, str) else None,
                "seen": [[list(part) for part in shown(msgs[-1])] for msgs in script.seen],
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
