"""One phase of a durable Haystack run in its own process (the CLI's store, history in a file).

    python hs_process.py start|resume|replay|wait|resume-kept DIR

`wait` runs a waiting `SignoffConfirmationStrategy` (and is killed while it waits); `resume-kept`
continues what it kept in the store. Prints one JSON line: the exit reason, the requests waited
for, what the model was shown.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage

from signoff import Gate, RuleSet, open_backend
from signoff.integrations.haystack import (
    AWAITING_APPROVAL,
    SignoffConfirmationHook,
    SignoffConfirmationStrategy,
    SignoffPauseHook,
    resume,
    waiting_requests,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.integrations.hs_support import Ledger, Script, calls, make_tools, shown

CONTEXT: dict[str, Any] = {"signoff": {"thread_id": "nightly-1"}}
RULES = RuleSet.model_validate({"tools": {"send_email": {"requires_approval": True}}})


def main(phase: str, folder: Path) -> None:
    turns: Any = [
        calls(("send_email", {"to": "alice", "body": "hi"}, "c1"), ("read_data", {"table": "t"}, "c2"))
    ]
    script = Script(*(turns if phase in ("start", "wait") else ["done"]))
    gate = Gate(open_backend(), rules=RULES)
    waiting = phase in ("wait", "resume-kept")
    hook: Any = (
        SignoffConfirmationHook({"*": SignoffConfirmationStrategy(gate)})
        if waiting
        else SignoffPauseHook(gate=gate)
    )
    agent = Agent(
        chat_generator=script.generator(),
        tools=make_tools(Ledger(folder / "ledger.jsonl")),
        hooks={"before_tool": [hook]},
    )
    saved = folder / "history.json"
    if phase in ("start", "wait"):
        result = agent.run([ChatMessage.from_user("mail alice, read t")], hook_context=CONTEXT)
        saved.write_text(json.dumps([m.to_dict() for m in result["messages"]]))
    elif phase == "resume-kept":
        result = resume(agent, None, hook_context=CONTEXT)
    else:
        history = [ChatMessage.from_dict(m) for m in json.loads(saved.read_text())]
        result = resume(agent, history, hook_context=CONTEXT)
    paused = result["exit_reason"] == AWAITING_APPROVAL
    print(
        json.dumps(
            {
                "exit_reason": result["exit_reason"],
                "waiting": waiting_requests(result["messages"]) if paused else [],
                "seen": [shown(messages) for messages in script.seen],
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
