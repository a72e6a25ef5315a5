"""A durable run across processes: the agent exits while a call is pending, a person decides with
the CLI from another process, a third process resumes, the tool runs once; a replay runs nothing.
And a waiting run (`wait=True`) killed while it waits: LangGraph's checkpointer holds the run from
the model's turn (before the tools node), so another process resumes it on the same thread."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from tests.integrations.processes import approve_with_cli, kill_while_waiting, local_env, run_phase

pytest.importorskip("langgraph.checkpoint.sqlite")

from langchain.agents import create_agent
from langgraph.checkpoint.sqlite import SqliteSaver

from signoff import Approve, Gate
from signoff.integrations.langchain import SignoffMiddleware
from signoff.store import SQLiteStore, Store

from ..conftest import drop_pg_schema
from .lc_support import Ledger, make_tools, script

SCRIPT = Path(__file__).with_name("lc_process.py")
CONFIG: Any = {"configurable": {"thread_id": "nightly-1"}}


phase = partial(run_phase, SCRIPT)


@pytest.mark.slow
def test_pause_in_one_process_decide_in_another_resume_in_a_third(tmp_path: Path) -> None:
    env = local_env(tmp_path / "signoff.db")
    three_processes(tmp_path, env)


@pytest.mark.slow
def test_the_same_with_postgres_saver_and_a_postgres_store(tmp_path: Path, pg_store: Store) -> None:
    """LangGraph's PostgresSaver for the graph, signoff's PostgreSQL store for the requests."""
    pytest.importorskip("langgraph.checkpoint.postgres")
    import psycopg
    from psycopg import sql

    from signoff.store.postgres import PostgresStore

    assert isinstance(pg_store, PostgresStore) and pg_store.schema is not None
    graph_schema = f"{pg_store.schema}_graph"
    with psycopg.connect(pg_store.url, autocommit=True) as connection:
        connection.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(graph_schema)))
    try:
        env = {
            **local_env(pg_store),
            "LC_GRAPH_DSN": f"{pg_store.url}?options=-csearch_path%3D{graph_schema}",
        }
        three_processes(tmp_path, env)
        assert not (tmp_path / "graph.db").exists()  # the graph was in PostgreSQL
    finally:
        drop_pg_schema(graph_schema)


def three_processes(tmp_path: Path, env: dict[str, str]) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")

    started = phase("start", tmp_path, env)
    (pause,) = started["interrupts"]
    assert [a["name"] for a in pause["action_requests"]] == ["send_email"]
    (waiting,) = pause["signoff"]["requests"]
    assert [run["tool"] for run in ledger.runs()] == []  # the tools node has not run at all

    approve_with_cli(waiting["request_id"], env)

    resumed = phase("resume", tmp_path, env)
    assert resumed["interrupts"] == []
    assert [m["content"] for m in resumed["seen"][0]] == ["sent to alice", "rows of t"]
    # the two calls run in parallel tasks: in either order, each once, the gated one under its key
    assert sorted((run["tool"], run["key"]) for run in ledger.runs()) == [
        ("read_data", None),
        ("send_email", waiting["request_id"]),
    ]

    replayed = phase("replay", tmp_path, env)
    assert replayed["seen"][0][0] == resumed["seen"][0][0]
    assert [run["tool"] for run in ledger.runs()].count("send_email") == 1  # the gated call: never again
    assert [run["tool"] for run in ledger.runs()].count("read_data") == 2  # an ungated call is not signoff's


@pytest.mark.slow
def test_a_waiting_run_killed_while_it_waits_is_resumed_in_another_process(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    env = local_env(sqlite_store)
    ledger = Ledger(tmp_path / "ledger.jsonl")

    def checkpointed() -> bool:
        # LangGraph's default durability ("async") writes the model turn's checkpoint while the
        # tools node starts: the run can be resumed once it is written
        return next_nodes(tmp_path / "graph.db", Gate(sqlite_store)) == ("tools",)

    request = kill_while_waiting(SCRIPT, tmp_path, sqlite_store, resumable=checkpointed)
    assert [run["tool"] for run in ledger.runs()] in ([], ["read_data"])  # the ungated call may have run

    sqlite_store.decide(request.id, Approve(), actor="alice")
    resumed = phase("resume-waiting", tmp_path, env)
    assert resumed["interrupts"] == []
    assert [m["content"] for m in resumed["seen"][0]] == ["sent to alice", "rows of t"]
    # each once: an ungated call that ran before the kill had its result kept by LangGraph
    assert sorted((run["tool"], run["key"]) for run in ledger.runs()) == [
        ("read_data", None),
        ("send_email", request.id),
    ]

    again = phase("again", tmp_path, env)  # the thread invoked once more: it has finished
    assert again == {"interrupts": [], "seen": []}
    replayed = phase("replay-waiting", tmp_path, env)  # from the checkpoint before the tools node
    assert replayed["seen"][0][0] == resumed["seen"][0][0]
    assert [run["tool"] for run in ledger.runs()].count("send_email") == 1  # its execution record says it ran


def next_nodes(graph: Path, gate: Gate) -> tuple[str, ...]:
    """What the thread's last checkpoint in `graph` runs next, as any process reads it."""
    if not graph.exists():
        return ()
    with closing(sqlite3.connect(graph, check_same_thread=False)) as connection:
        middleware = SignoffMiddleware(gate=gate, wait=True)
        saver = SqliteSaver(connection)
        reader = create_agent(
            script(),
            make_tools(Ledger(graph.with_suffix(".unused"))),
            middleware=[middleware],
            checkpointer=saver,
        )
        try:
            nodes: tuple[str, ...] = reader.get_state(CONFIG).next
        except sqlite3.OperationalError:  # the saver has not made its tables yet
            return ()
    return nodes
