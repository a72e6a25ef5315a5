"""One phase of a durable LangGraph run in its own process (the CLI's store).

    python lc_process.py start|resume|replay|wait|resume-waiting|again|replay-waiting DIR

The graph is saved with SqliteSaver in DIR, or with PostgresSaver when LC_GRAPH_DSN is set.
`wait` runs `SignoffMiddleware(wait=True)` (and is killed while it waits); `resume-waiting`
continues it with `resume_when_decided`, `again` invokes the graph on the thread once more, and
`replay-waiting` replays it from the checkpoint before the tools node, all with the waiting
middleware.

Prints one JSON line: the run's interrupts and the ToolMessages the model was shown.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from signoff.integrations.langchain import SignoffMiddleware, resume_when_decided

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
TURNS.update(
    {"wait": TURNS["start"], "resume-waiting": ["done"], "again": ["never"], "replay-waiting": ["done again"]}
)
WAITING = ("wait", "resume-waiting", "again", "replay-waiting")


@contextmanager
def graph_saver(folder: Path, *, setup: bool) -> Iterator[BaseCheckpointSaver[Any]]:
    dsn = os.environ.get("LC_GRAPH_DSN")
    if not dsn:
        yield SqliteSaver(sqlite3.connect(folder / "graph.db", check_same_thread=False))
        return
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    # the connection flags PostgresSaver needs on a connection of one's own
    with psycopg.connect(dsn, autocommit=True, row_factory=dict_row, prepare_threshold=0) as connection:
        saver = PostgresSaver(connection)  # type: ignore[arg-type]
        if setup:
            saver.setup()
        yield saver


def main(phase: str, folder: Path) -> None:
    with graph_saver(folder, setup=phase == "start") as saver:
        run_phase(phase, folder, saver)


def run_phase(phase: str, folder: Path, saver: BaseCheckpointSaver[Any]) -> None:
    model = script(*TURNS[phase])
    # the store the CLI uses
    middleware = SignoffMiddleware(interrupt_on={"send_email": True}, wait=phase in WAITING)
    agent = create_agent(
        model, tools=make_tools(Ledger(folder / "ledger.jsonl")), middleware=[middleware], checkpointer=saver
    )
    if phase in ("start", "wait"):
        result = agent.invoke({"messages": [{"role": "user", "content": "mail alice"}]}, CONFIG, version="v2")
    elif phase == "resume":
        result = agent.invoke(Command(resume=True), CONFIG, version="v2")
    elif phase == "resume-waiting":
        result = resume_when_decided(agent, CONFIG, middleware)
    elif phase == "again":
        result = agent.invoke(None, CONFIG, version="v2")
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
