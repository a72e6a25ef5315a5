"""Listings read index ranges (issue 8, item 29) yet give exactly what the rules say, on SQLite
and PostgreSQL: every combination of viewer, filters, cursor and page size, checked against
the same rules applied in Python to every request (tests/requests_mix.py)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from signoff import Request, RequestStatus
from signoff.store import Store

from .requests_mix import (
    AGENTS,
    APPS,
    CREATORS,
    GROUPS,
    PEOPLE,
    THREADS,
    TOOLS,
    VIEWERS,
    Listing,
    every_request,
    make_mix,
    visible,
)

STATUSES = [status.value for status in RequestStatus]
OPEN = ("pending", "drafting")


@pytest.fixture(params=["sqlite", "postgres"], scope="module")
def mixed(request: pytest.FixtureRequest) -> Iterator[tuple[Store, list[Request]]]:
    """One store per dialect holding the mix, shared by this module's tests (they only read)."""
    store: Store
    if request.param == "sqlite":
        from signoff.store import SQLiteStore

        folder = request.getfixturevalue("tmp_path_factory").mktemp("mix")
        store = SQLiteStore(folder / "mix.db")
        cleanup = store.close
    else:
        from tests.conftest import NO_POSTGRES, POSTGRES_DSN, drop_pg_schema, new_pg_schema

        if not POSTGRES_DSN:
            pytest.skip(NO_POSTGRES)
        from signoff.store.postgres import PostgresStore

        schema = new_pg_schema()
        store = PostgresStore(POSTGRES_DSN, schema=schema, max_size=2)

        def cleanup() -> None:
            store.close()
            drop_pg_schema(schema)

    try:
        ids = make_mix(store, 240)
        yield store, every_request(store, ids)
    finally:
        cleanup()


def groups_of(store: Store) -> dict[str, list[str]]:
    return store.group_members()


def listings(ids: list[str]) -> st.SearchStrategy[Listing]:
    statuses = st.one_of(
        st.none(),
        st.just(OPEN),
        st.sampled_from(STATUSES).map(lambda status: (status,)),
        st.lists(st.sampled_from(STATUSES), unique=True, max_size=4).map(tuple),
    )
    return st.builds(
        Listing,
        viewer=st.sampled_from(VIEWERS),
        statuses=statuses,
        tool=st.none() | st.sampled_from(TOOLS),
        agent=st.none() | st.sampled_from([agent for agent in AGENTS if agent]),
        app=st.none() | st.sampled_from([app for app in APPS if app]),
        thread_id=st.none() | st.sampled_from([f"thread-{n}" for n in range(THREADS)]),
        tool_call_id=st.none() | st.sampled_from(["call-3", "call-4", "call-nope"]),
        created_by=st.none() | st.sampled_from(CREATORS),
        approver=st.none() | st.sampled_from(["alice", "group:ops", "group:legal", "nobody"]),
        search=st.none() | st.sampled_from(["mail", "REPORT", "%", "_", "\\", "é", "zzz", "thread-1"]),
        cursor=st.none() | st.sampled_from(ids),
        limit=st.sampled_from([1, 2, 7, 50, 1000]),
    )


def test_every_listing_gives_what_the_rules_say(mixed: tuple[Store, list[Request]]) -> None:
    store, every = mixed
    groups = groups_of(store)

    @settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(listing=listings(sorted(request.id for request in every)))
    def check(listing: Listing) -> None:
        assert [request.id for request in listing.run(store)] == listing.expected(every, groups)

    check()


@pytest.mark.parametrize("viewer", VIEWERS)
@pytest.mark.parametrize("statuses", [None, OPEN, ("rejected",)])
def test_pages_walk_the_whole_listing_once(
    mixed: tuple[Store, list[Request]], viewer: str | None, statuses: tuple[str, ...] | None
) -> None:
    store, every = mixed
    whole = Listing(viewer=viewer, statuses=statuses, limit=1000).expected(every, groups_of(store))
    walked: list[str] = []
    cursor = None
    while True:
        page = Listing(viewer=viewer, statuses=statuses, cursor=cursor, limit=7).run(store)
        walked.extend(request.id for request in page)
        if len(page) < 7:
            break
        cursor = page[-1].id
    assert walked == whole
    assert whole, "each viewer should see something of the mix"


@pytest.mark.parametrize("statuses", [None, OPEN])
def test_a_person_in_more_groups_than_list_visible_reads_gets_the_same_pages(
    mixed: tuple[Store, list[Request]], monkeypatch: pytest.MonkeyPatch, statuses: tuple[str, ...] | None
) -> None:
    """olga (in two groups) read through the union, as a person in many groups is."""
    store, every = mixed
    monkeypatch.setattr("signoff.store.listing.VISIBLE_PRINCIPALS", 2)
    whole = Listing(viewer="olga", statuses=statuses, limit=1000).expected(every, groups_of(store))
    walked: list[str] = []
    cursor = None
    while True:
        page = Listing(viewer="olga", statuses=statuses, cursor=cursor, limit=7).run(store)
        walked.extend(request.id for request in page)
        if len(page) < 7:
            break
        cursor = page[-1].id
    assert walked == whole
    assert whole


@pytest.mark.parametrize("viewer", VIEWERS)
def test_overview_counts_cover_what_the_viewer_may_see(
    mixed: tuple[Store, list[Request]], viewer: str | None
) -> None:
    store, every = mixed
    groups = groups_of(store)
    shown = [request for request in every if visible(request, viewer, groups)]
    waiting = Counter((r.tool_name, r.agent) for r in shown if r.status.value in OPEN)
    assert Counter({(tool, agent): n for tool, agent, n in store.open_counts(visible_to=viewer)}) == waiting
    decided = sorted(r.decided_at for r in shown if r.decided_at is not None)
    assert [row.decided_at for row in store.decided_since(timedelta(days=1), visible_to=viewer)] == decided


@pytest.mark.parametrize("viewer", [None, "alice", "newbie"])
@pytest.mark.parametrize("cursor_at", [None, 100])
def test_a_text_search_looks_through_a_bounded_window(
    mixed: tuple[Store, list[Request]],
    monkeypatch: pytest.MonkeyPatch,
    viewer: str | None,
    cursor_at: int | None,
) -> None:
    """Only the newest `SEARCH_WINDOW` requests before the cursor (anyone's) are searched."""
    store, every = mixed
    monkeypatch.setattr("signoff.store.request_reads.SEARCH_WINDOW", 60)
    newest_first = sorted(every, key=lambda request: request.id, reverse=True)
    cursor = newest_first[cursor_at].id if cursor_at is not None else None
    before = [request for request in newest_first if cursor is None or request.id < cursor]
    listing = Listing(viewer=viewer, search="e", cursor=cursor, limit=1000)
    expected = listing.expected(before[:60], groups_of(store))
    assert [request.id for request in listing.run(store)] == expected
    assert 0 < len(expected) < len(listing.expected(every, groups_of(store)))


def test_the_mix_has_every_shape_of_viewer() -> None:
    assert "newbie" in PEOPLE
    assert all("newbie" not in members for members in GROUPS.values())
