"""Run states: a paused run's saved state, one per (creator, thread), replaced at each save."""

from __future__ import annotations

import asyncio

import pytest

from signoff import AsyncClient, Client, PermissionDenied
from signoff.store import Store
from tests.live import LiveServer


def test_a_run_state_is_kept_per_creator_and_thread_and_replaced(store: Store) -> None:
    first = store.save_run_state("t1", '{"turn": 1}', kind="openai-agents", created_by="mail-agent")
    assert (first.thread_id, first.kind, first.state, first.created_by) == (
        "t1",
        "openai-agents",
        '{"turn": 1}',
        "mail-agent",
    )
    again = store.save_run_state("t1", '{"turn": 2}', kind="openai-agents", created_by="mail-agent")
    assert again.state == '{"turn": 2}'
    assert again.created_at == first.created_at
    assert again.updated_at >= first.updated_at

    assert store.load_run_state("t1", created_by="other-agent") is None
    assert store.load_run_state("t2", created_by="mail-agent") is None
    loaded = store.load_run_state("t1", created_by="mail-agent")
    assert loaded is not None and loaded.state == '{"turn": 2}'

    assert store.delete_run_state("t1", created_by="other-agent") is False
    assert store.delete_run_state("t1", created_by="mail-agent") is True
    assert store.load_run_state("t1", created_by="mail-agent") is None
    assert store.delete_run_state("t1", created_by="mail-agent") is False


def test_over_the_api_only_the_agent_that_saved_a_run_state_reads_it(live_server: LiveServer) -> None:
    with (
        Client(live_server.url, live_server.user("mail-agent", role="agent")) as mailer,
        Client(live_server.url, live_server.user("other-agent", role="agent")) as other,
        Client(live_server.url, live_server.user("alice", role="member")) as person,
    ):
        saved = mailer.save_run_state("t1", '{"turn": 1}', kind="openai-agents")
        assert (saved.created_by, saved.thread_id, saved.state) == ("mail-agent", "t1", '{"turn": 1}')
        loaded = mailer.load_run_state("t1")
        assert loaded is not None and loaded.state == '{"turn": 1}' and loaded.kind == "openai-agents"

        assert other.load_run_state("t1") is None  # thread ids are per agent
        other.delete_run_state("t1")
        with pytest.raises(PermissionDenied):
            person.load_run_state("t1")
        with pytest.raises(PermissionDenied):
            person.save_run_state("t1", "{}", kind="openai-agents")

        mailer.delete_run_state("t1")
        assert mailer.load_run_state("t1") is None
    assert live_server.store.load_run_state("t1", created_by="mail-agent") is None


def test_the_async_client_keeps_and_reads_run_states_as_the_client_does(live_server: LiveServer) -> None:
    async def scenario() -> None:
        async with (
            AsyncClient(live_server.url, live_server.user("mail-agent", role="agent")) as mailer,
            AsyncClient(live_server.url, live_server.user("other-agent", role="agent")) as other,
            AsyncClient(live_server.url, live_server.user("alice", role="member")) as person,
        ):
            saved = await mailer.save_run_state("t1", '{"turn": 1}', kind="openai-agents")
            assert (saved.created_by, saved.thread_id, saved.kind) == ("mail-agent", "t1", "openai-agents")
            replaced = await mailer.save_run_state("t1", '{"turn": 2}', kind="openai-agents")
            assert replaced.created_at == saved.created_at and replaced.state == '{"turn": 2}'
            loaded = await mailer.load_run_state("t1")
            assert loaded is not None and loaded.state == '{"turn": 2}'
            assert await other.load_run_state("t1") is None  # thread ids are per agent
            with pytest.raises(PermissionDenied):
                await person.save_run_state("t1", "{}", kind="openai-agents")
            assert await mailer.delete_run_state("t1") is True
            assert await mailer.load_run_state("t1") is None

    asyncio.run(scenario())
    assert live_server.store.load_run_state("t1", created_by="mail-agent") is None
