"""Run states: a paused run's saved state, one per (creator, thread), replaced at each save."""

from __future__ import annotations

from signoff.store import Store


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
