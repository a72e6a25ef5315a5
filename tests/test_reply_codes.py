"""Reply codes in the store (both backends): one per request, channel and person, kept; never
repeated for that person on that channel; the open ones listed oldest first."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta

import pytest

from signoff import Approve
from signoff._util import utcnow
from signoff.errors import StoreError
from signoff.requests import NewRequest
from signoff.rules.effective import RequestRule
from signoff.store import Store, reply_code_ops
from signoff.store.reply_code_ops import CODE_ALPHABET, CODE_LENGTH, normal_code

CALLS = iter(range(1_000_000))


def ask(
    store: Store, *, approvers: tuple[str, ...] = ("alice",), channels: tuple[str, ...] = ("wechat",)
) -> str:
    new = NewRequest(
        thread_id="t",
        tool_call_id=f"c{next(CALLS)}",
        tool_name="run_sql",
        args={"sql": "SELECT 1"},
        description="Run SQL",
        deadline=utcnow() + timedelta(hours=1),
        rule=RequestRule(approvers=approvers, channels=channels),
    )
    return store.create_request(new)[0].id


def scripted(codes: list[str]) -> Iterator[str]:
    yield from codes
    raise AssertionError("asked for more codes than scripted")


def test_a_code_is_short_typeable_and_kept(store: Store) -> None:
    request_id = ask(store, approvers=("alice", "bob"))
    code = store.reply_code(request_id, "wechat", "alice")
    assert len(code) == CODE_LENGTH and set(code) <= set(CODE_ALPHABET)
    assert not set(code) & set("01ILOU2"), "nothing that reads as another character (Z stays: 2 is gone)"
    assert store.reply_code(request_id, "wechat", "alice") == code
    assert normal_code(code.lower()) == code
    assert store.request_of_reply_code("wechat", "alice", code) == request_id
    bobs = store.reply_code(request_id, "wechat", "bob")
    assert store.request_of_reply_code("wechat", "bob", bobs) == request_id
    assert store.request_of_reply_code("slack", "alice", code) is None, "a code is the channel's"


def test_the_open_requests_of_a_person_on_a_channel_oldest_first_with_codes(store: Store) -> None:
    first = ask(store)
    second = ask(store)
    elsewhere = ask(store, channels=("slack",))
    bobs = ask(store, approvers=("bob",))
    closed = ask(store)
    store.decide(closed, Approve(), actor="alice")
    inbox_only = ask(store, channels=("inbox",))
    listed = store.open_requests("wechat", "alice")
    assert [entry.request_id for entry in listed] == [first, second]
    assert len({entry.code for entry in listed}) == 2
    assert store.open_requests("wechat", "alice") == listed, "the codes made are kept"
    assert [entry.request_id for entry in store.open_requests("slack", "alice")] == [elsewhere]
    assert [entry.request_id for entry in store.open_requests("wechat", "bob")] == [bobs]
    assert inbox_only not in {entry.request_id for entry in listed}


def test_a_persons_code_is_never_given_twice_on_a_channel(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not even once the first request has closed: a late reply carrying the old code must find
    the old request, never a new one."""
    first, second, third = ask(store), ask(store), ask(store, approvers=("bob",))
    codes = scripted(["K7QD", "K7QD", "P4MW", "K7QD"])
    monkeypatch.setattr(reply_code_ops, "new_code", lambda: next(codes))
    assert store.reply_code(first, "wechat", "alice") == "K7QD"
    store.decide(first, Approve(), actor="alice")
    assert store.reply_code(second, "wechat", "alice") == "P4MW", "K7QD is alice's already"
    assert store.reply_code(third, "wechat", "bob") == "K7QD", "another person may have the same code"
    assert store.request_of_reply_code("wechat", "alice", "K7QD") == first


def test_no_free_code_is_an_error_not_a_shared_code(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = ask(store), ask(store)
    monkeypatch.setattr(reply_code_ops, "new_code", lambda: "K7QD")
    assert store.reply_code(first, "wechat", "alice") == "K7QD"
    with pytest.raises(StoreError, match="no free reply code"):
        store.reply_code(second, "wechat", "alice")


def test_codes_made_at_once_for_one_request_are_one_code(store: Store) -> None:
    request_id = ask(store)
    got: list[str] = []
    start = threading.Barrier(4)

    def make() -> None:
        start.wait()
        got.append(store.reply_code(request_id, "wechat", "alice"))

    threads = [threading.Thread(target=make) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(got) == 4 and len(set(got)) == 1
