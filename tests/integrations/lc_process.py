"""One phase of a durable LangGraph run in its own process (SqliteSaver, the CLI's store).

    python lc_process.py start|resume|replay DIR

Prints one JSON line: the run's interrupts and the ToolMessages the model was shown.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from signoff.integrations.langchain import SignoffMiddleware

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.integrations.lc_support import Ledger, calls, make_tools, script, tool_messages

CONFIG: Any = {"configurable": {"thread_id": "nightly-1"}}
TURNS: dict[str, Any] = {
    "start": [
        calls(("send_email", {"to": "alice", "body": "hi"}, "c1"), ("read_data", {"table": "t"}, "c2"))
    ],
    "resume": ["done"],
    "replay": ["done again"],
}


def main(phase: str, folder: Path) -> None:
    saver = SqliteSaver(sqlite3.connect(folder / "graph.db", check_same_thread=False))
    model = script(*TURNS[phase])
    middleware = SignoffMiddleware(interrupt_on={"send_email": True})  # the store the CLI uses
    agent = create_agent(
        model, tools=make_tools(Ledger(folder / "ledger.jsonl")), middleware=[middleware], checkpointer=saver
    )
    if phase == "start":
        result = agent.invoke({"messages": [{"role": "user", "content": "mail alice"}]}, CONFIG, version="v2")
    elif phase == "resume":
        result = agent.invoke(Command(resume=True), CONFIG, version="v2")
    else:
        before_tools = next(s for s in agent.get_state_history(CONFIG) if "tools" in s.next)
        result = agent.invoke(None, before_tools.config, version="v2")
    print(
        json.dumps(
            {
                "interrupts": [item.value for item in result.interrupts],
                "seen": [tool_messages(messages) for messages in model.seen],
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
