"""A person's own channel address counts only once the code sent there comes back (DESIGN §9),
in the store, on SQLite and PostgreSQL: a claim stays unverified (nothing is sent there, and its
callbacks act as nobody) until the right code is entered; a wrong, expired or reused code fails;
five wrong tries use a code up, even when guessed in parallel; codes are stored hashed; a new one
at most once a minute; an admin's word verifies at once; a verified address cannot be taken, and
the first to verify a shared claim holds it. And what migration 0010 makes of addresses stored
before it."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from signoff._util import to_iso, utcnow
from signoff.errors import AlreadyExists, CodeRefused, NotFound, TooSoon
from signoff.store import SQLiteStore, Store
from signoff.store.address_codes import MAX_TRIES, IssuedCode

from .old_schema import Run, migrated_store


@pytest.fixture
def people(store: Store) -> Store:
    for name in ("alice", "bob", "carol", "dave"):
        store.add_user(name, role="member", actor="test")
    store.add_user("root", role="admin", actor="test")
    return store


def actions(store: Store) -> list[str]:
    return [entry.action for entry in store.audit_entries() if entry.action.startswith("user.address")]


def issue(store: Store, user: str, address: str, kind: str = "slack") -> IssuedCode:
    """The code the delivery worker would send (it makes one as it sends the row)."""
    issued = store.issue_address_code(user, kind, address, via="slack", outbox_id=1)
    assert issued is not None
    return issued


def wrong(code: str) -> str:
    return f"{(int(code) + 1) % 10**6:06d}"


def test_a_persons_own_address_counts_once_its_code_comes_back(people: Store) -> None:
    claimed = people.claim_address("bob", "slack", "U-BOB", via="slack")
    assert claimed.code_via == "slack" and not claimed.state.verified
    assert people.address_of("bob", "slack") is None, "nothing is sent to an unverified address"
    assert people.user_at("slack", "U-BOB") is None, "a callback from it acts as nobody"
    assert people.address_claimants("slack", "U-BOB") == ["bob"]
    assert people.addresses_of("bob") == {"slack": "U-BOB"}
    code = issue(people, "bob", "U-BOB").code
    assert len(code) == 6 and code.isdigit()
    with pytest.raises(CodeRefused, match=r"wrong code .* \(4 tries left\)"):
        people.verify_address("bob", "slack", wrong(code))
    state = people.verify_address("bob", "slack", f" {code[:3]} {code[3:]} ")  # as people type it
    assert state.verified and state.verified_by == "bob"
    assert people.address_of("bob", "slack") == "U-BOB"
    assert people.user_at("slack", "U-BOB") == "bob"
    with pytest.raises(CodeRefused, match="verified already"):
        people.verify_address("bob", "slack", code)  # a code works once
    assert actions(people) == [
        "user.address_claimed",
        "user.address_code_requested",
        "user.address_code_issued",
        "user.address_code_refused",
        "user.address_verified",
        "user.address_code_refused",
    ]


def test_an_expired_code_fails_and_is_gone(people: Store) -> None:
    people.claim_address("bob", "slack", "U-BOB", via="slack")
    issued = issue(people, "bob", "U-BOB")
    later = issued.expires_at + timedelta(seconds=1)
    with pytest.raises(CodeRefused, match="expired"):
        people.verify_address("bob", "slack", issued.code, now=later)
    with pytest.raises(CodeRefused, match="no code is waiting"):
        people.verify_address("bob", "slack", issued.code)
    assert people.address_of("bob", "slack") is None


def test_five_wrong_tries_use_a_code_up(people: Store) -> None:
    people.claim_address("bob", "slack", "U-BOB", via="slack")
    code = issue(people, "bob", "U-BOB").code
    for left in range(MAX_TRIES - 1, 0, -1):
        with pytest.raises(CodeRefused, match=f"\\({left} tr"):
            people.verify_address("bob", "slack", wrong(code))
    with pytest.raises(CodeRefused, match="last try"):
        people.verify_address("bob", "slack", wrong(code))
    with pytest.raises(CodeRefused, match="ask for one"):
        people.verify_address("bob", "slack", code)  # the right code, too late
    people.request_address_code("bob", "slack", via="slack", now=utcnow() + timedelta(minutes=2))
    fresh = issue(people, "bob", "U-BOB").code
    assert people.verify_address("bob", "slack", fresh).verified


def test_parallel_guesses_cannot_pass_the_limit(people: Store) -> None:
    people.claim_address("bob", "slack", "U-BOB", via="slack")
    code = issue(people, "bob", "U-BOB").code
    said: list[str] = []
    lock = threading.Lock()

    def guess(number: int) -> None:
        try:
            people.verify_address("bob", "slack", f"{(int(code) + 1 + number) % 10**6:06d}")
        except CodeRefused as exc:
            with lock:
                said.append(exc.message)

    threads = [threading.Thread(target=guess, args=(number,)) for number in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(said) == 12
    counted = [message for message in said if message.startswith("wrong code")]
    assert len(counted) == MAX_TRIES, said
    assert all(
        "no code is waiting" in message or "too many" in message for message in said if message not in counted
    )
    audited = [e for e in people.audit_entries() if e.action == "user.address_code_refused"]
    assert len(audited) == 12
    with pytest.raises(CodeRefused):
        people.verify_address("bob", "slack", code)
    assert people.address_of("bob", "slack") is None


def test_a_new_code_at_most_once_a_minute_and_it_replaces_the_last(people: Store) -> None:
    people.claim_address("bob", "slack", "U-BOB", via="slack")
    first = issue(people, "bob", "U-BOB").code
    with pytest.raises(TooSoon) as refused:
        people.request_address_code("bob", "slack", via="slack")
    assert refused.value.retry_after is not None and 0 < refused.value.retry_after <= 60
    people.request_address_code("bob", "slack", via="slack", now=utcnow() + timedelta(seconds=61))
    second = issue(people, "bob", "U-BOB").code
    if second != first:
        with pytest.raises(CodeRefused, match="wrong code"):
            people.verify_address("bob", "slack", first)
    assert people.verify_address("bob", "slack", second).verified
    with pytest.raises(NotFound):
        people.request_address_code("carol", "slack", via="slack")


def test_an_admin_sets_an_address_verified(people: Store) -> None:
    people.claim_address("bob", "slack", "U-DAVE", via="slack")  # bob's claim, never verified
    people.set_address("dave", "slack", "U-DAVE", actor="root", channel="api")
    state = people.address_state("dave", "slack")
    assert state is not None and state.verified and state.verified_by == "root"
    assert people.user_at("slack", "U-DAVE") == "dave"
    assert people.addresses_of("bob") == {}, "the unverified claim is dropped"
    assert people.issue_address_code("bob", "slack", "U-DAVE", via="slack", outbox_id=1) is None
    removed = [e for e in people.audit_entries() if e.action == "user.address_removed"]
    assert [entry.data["user"] for entry in removed] == ["bob"]


def test_bob_cannot_take_daves_verified_address(people: Store) -> None:
    people.set_address("dave", "slack", "U-DAVE", actor="root")
    with pytest.raises(AlreadyExists, match="already verified for another signoff user"):
        people.claim_address("bob", "slack", "U-DAVE", via="slack")
    with pytest.raises(AlreadyExists, match="already dave's"):
        people.set_address("bob", "slack", "U-DAVE", actor="root")
    assert people.user_at("slack", "U-DAVE") == "dave"
    assert people.addresses_of("bob") == {}
    assert "user.address_claim_refused" in actions(people)


def test_two_may_claim_an_address_and_the_first_to_verify_holds_it(people: Store) -> None:
    people.claim_address("bob", "slack", "U-SHARED", via="slack")
    people.claim_address("carol", "slack", "U-SHARED", via="slack")
    assert people.address_claimants("slack", "U-SHARED") == ["bob", "carol"]
    bobs, carols = issue(people, "bob", "U-SHARED").code, issue(people, "carol", "U-SHARED").code
    assert people.verify_address("carol", "slack", carols).verified
    assert people.user_at("slack", "U-SHARED") == "carol"
    assert people.addresses_of("bob") == {}
    with pytest.raises(NotFound):
        people.verify_address("bob", "slack", bobs)
    with pytest.raises(AlreadyExists):
        people.claim_address("bob", "slack", "U-SHARED", via="slack")


def test_claiming_the_same_address_again(people: Store) -> None:
    people.set_address("bob", "slack", "U-BOB", actor="root")
    again = people.claim_address("bob", "slack", "U-BOB", via="slack")
    assert again.state.verified and again.code_via is None, "a verified address stays verified"
    moved = people.claim_address("bob", "slack", "U-BOB2", via="slack")
    assert not moved.state.verified and people.address_of("bob", "slack") is None
    repeat = people.claim_address("bob", "slack", "U-BOB2", via="slack")
    assert repeat.code_via is None, "no second code within the minute"
    unsent = people.claim_address("carol", "email", "carol@example.com", via=None)
    assert unsent.code_via is None and not unsent.state.verified


def test_codes_are_stored_hashed(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    try:
        store.add_user("bob", role="member", actor="test")
        store.claim_address("bob", "slack", "U-BOB", via="slack")
        code = issue(store, "bob", "U-BOB").code
    finally:
        store.close()
    connection = sqlite3.connect(tmp_path / "s.db")
    (stored,) = connection.execute("SELECT code_hash FROM user_addresses").fetchone()
    dumped = "\n".join(connection.iterdump())
    connection.close()
    salt, _, digest = stored.partition("$")
    assert salt and len(digest) == 64 and code not in stored
    assert code not in dumped.replace(stored, "")


# -- migration 0010 -------------------------------------------------------------------------

BEFORE = 9
"""The last migration before addresses were verified."""
ENTRIES = [  # (actor, user, kind, address): who set each address, as the audit log says
    ("bob", "bob", "slack", "U-DAVE"),  # bob set dave's Slack id as his own: the hole
    ("root", "alice", "slack", "U-ALICE"),  # an admin set alice's
    ("carol", "carol", "email", "carol@old.example.com"),  # carol set one, then changed it ...
    ("root", "carol", "email", "carol@example.com"),  # ... and an admin set it
    ("carol", "carol", "wecom", "carol"),
]
ADDRESSES = [
    ("bob", "slack", "U-DAVE"),
    ("alice", "slack", "U-ALICE"),
    ("carol", "email", "carol@example.com"),
    ("carol", "wecom", "carol"),
    ("dave", "feishu", "ou_dave"),  # no entry: the log cannot tell
]


def _old_rows(run: Run, marker: str) -> None:
    """Users, the audit log's entries and the addresses, as the store wrote them before 0010."""
    values = ", ".join([marker] * 3)
    for name in ("alice", "bob", "carol", "dave", "root"):
        run(
            f"INSERT INTO users (name, role, created_at) VALUES ({values})",
            (name, "member", to_iso(utcnow())),
        )
    for seq, (actor, user, kind, address) in enumerate(ENTRIES, start=1):
        data = json.dumps({"user": user, "kind": kind, "address": address})
        run(
            "INSERT INTO audit_log (seq, at, actor, channel, action, data, prev_hash, hash) "
            f"VALUES ({marker}, {marker}, {marker}, 'api', 'user.address_set', {marker}, '', '')",
            (seq, to_iso(utcnow()), actor, data),
        )
    for row in ADDRESSES:
        run(f"INSERT INTO user_addresses (user_name, kind, address) VALUES ({values})", row)


@pytest.fixture(params=["sqlite", "postgres"])
def migrated(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    with migrated_store(request.param, tmp_path, before=BEFORE, fill=_old_rows) as store:
        yield store


def test_addresses_a_person_set_themself_are_unverified_after_the_migration(migrated: Store) -> None:
    def verified_by(user: str, kind: str) -> str | None:
        state = migrated.address_state(user, kind)
        assert state is not None
        return state.verified_by if state.verified else None

    assert verified_by("bob", "slack") is None, "self-set: the hole this closes"
    assert migrated.user_at("slack", "U-DAVE") is None
    assert migrated.address_of("bob", "slack") is None
    assert verified_by("alice", "slack") == "root"
    assert verified_by("carol", "email") == "root", "the newest entry for that address says who"
    assert verified_by("carol", "wecom") is None
    assert verified_by("dave", "feishu") == "migration", "nothing says who: kept as it was"
    migrated.set_address("dave", "slack", "U-DAVE", actor="root")  # the real owner can now get it
    assert migrated.user_at("slack", "U-DAVE") == "dave"


def test_an_admin_setting_an_address_waits_for_a_code_being_issued_and_does_not_deadlock(
    pg_store: Store, pg_schema: str
) -> None:
    """The delivery worker issuing bob's code locks bob's claim, then the audit log's head; an
    admin's set_address for dave drops bob's claim: it must change that row before it takes the
    head (both orders at once deadlocked: PostgreSQL killed one, a 503 for the admin)."""
    import threading

    import psycopg

    from tests.conftest import POSTGRES_DSN

    pg_store.add_user("bob", actor="test")
    pg_store.add_user("dave", actor="test")
    pg_store.claim_address("bob", "slack", "U-DAVE", via=None)
    assert POSTGRES_DSN is not None
    with psycopg.connect(POSTGRES_DSN, options=f"-csearch_path={pg_schema}") as worker:
        worker.execute("SELECT 1 FROM user_addresses WHERE user_name = 'bob' FOR UPDATE")  # the code's row
        done: list[BaseException | None] = []

        def admin() -> None:
            try:
                pg_store.set_address("dave", "slack", "U-DAVE", actor="root")
                done.append(None)
            except BaseException as exc:
                done.append(exc)

        setting = threading.Thread(target=admin)
        setting.start()
        setting.join(1.0)  # it waits on bob's row ...
        assert setting.is_alive()
        worker.execute(
            "SELECT 1 FROM audit_head WHERE id = 1 FOR UPDATE"
        )  # ... while the worker takes the head
        worker.commit()
        setting.join(30)
    assert done == [None]
    assert pg_store.user_at("slack", "U-DAVE") == "dave"
