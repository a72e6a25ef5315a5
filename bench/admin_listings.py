"""An admin's listings at scale: the queries of their own (`list_newest`, `list_by_status`, chosen
by store/listing.py) against the visibility union they replaced for admins and against the query
from before that union (bench/scale.py's "before"), in the same run, on bench/scale.py's databases
(built and cached by it: N requests over 180 days, 0.5 % open, nearly all among the newest).
With --members, the same for two people's listings (alice, named on a quarter of the requests;
olga, in two groups), and their history narrowed by a tool or an app: their own queries
(`list_visible`, `list_visible_narrowed`) against the union and the query from before, written to
bench/results/member-listings.json.

    .venv/bin/python bench/admin_listings.py [--quick] [--members] [--requests N] [--no-postgres] [--dsn DSN]

Each listing as the inbox asks it, through `Store.list_requests` with rows decoded (the "before"
query through the same connection and decoding), and the statement alone (run and its rows
fetched, not decoded into requests: what the database and the driver cost): the inbox's first
page (open requests), the history's first page, a page 90 days back, and one status's history
(rejected). The three take turns in every round, in each of their six orders in turn (so that
each follows each other as often: the query from before, reading far more, leaves the page cache
colder for whichever comes next), several times each; each
figure is the median of a round's samples, reported as the median (min–max) of the rounds, and
the ratios are taken round by round. PostgreSQL in wall time (the database's own work is in
another process), SQLite in this thread's CPU time (all of its work, whatever else the shared
machine runs).
Prints a table and writes bench/results/admin-listings.json.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import scale
import scale_asks
import scale_data
from core import (
    Metric,
    Report,
    Target,
    machine_info,
    postgres_unavailable,
    print_report,
    progress,
    write_results,
)
from signoff.decision_checks import principals_of
from signoff.server.inbox.rendering import OPEN_STATUSES, PAGE_SIZE
from signoff.store import SQLiteStore, Store, request_reads
from signoff.store.listing import listing_params, listing_query

RESULTS = Path(__file__).resolve().parent / "results" / "admin-listings.json"
MEMBER_RESULTS = RESULTS.with_name("member-listings.json")
MEMBERS = ("alice", "olga")
OWN = "own queries"
UNION = "visibility union"
BEFORE = "query from before"
SIDES = (OWN, UNION, BEFORE)
ORDERS = list(itertools.permutations(SIDES))
WHATS = {"page": "the page (rows decoded)", "query": "the statement alone"}


@contextmanager
def union_path() -> Iterator[None]:
    """Listings as they were chosen before the admin queries: always the union."""
    real = getattr(request_reads, "listing_query")  # noqa: B009 - put back below
    setattr(request_reads, "listing_query", lambda params: "list_requests")  # noqa: B010
    try:
        yield
    finally:
        setattr(request_reads, "listing_query", real)  # noqa: B010


def listings(middle: str, viewer: str | None) -> dict[str, scale_asks.Ask]:
    found = {
        "inbox": scale_asks.Ask(viewer=viewer, statuses=tuple(OPEN_STATUSES)),
        "history": scale_asks.Ask(viewer=viewer),
        "later": scale_asks.Ask(viewer=viewer, cursor=middle),
        "status": scale_asks.Ask(viewer=viewer, statuses=("rejected",)),
    }
    if viewer is not None:
        found["tool"] = scale_asks.Ask(viewer=viewer, tool="tool_05")
        found["app"] = scale_asks.Ask(viewer=viewer, app="crm")
    return found


LABELS = {
    "inbox": "inbox, first page",
    "history": "history, first page",
    "later": "history, a page 90 days back",
    "status": "history of one status",
    "tool": "history of a tool (1 in 24)",
    "app": "history of one app (1 in 5)",
}


def timed(run: Callable[[], object], clock: Callable[[], float]) -> float:
    started = clock()
    run()
    return (clock() - started) * 1000


def measure(report: Report, built: scale_data.Built, viewer: str | None, rounds: int, per_round: int) -> None:
    store: Store = built.store
    scale_asks.install_before(store)
    middle = scale_data.request_id(datetime.now(UTC) - timedelta(days=scale_data.DAYS / 2), 0)
    asks = listings(middle, viewer)
    principals = None if viewer is None else principals_of(viewer, store.groups_of(viewer))
    who = viewer or "admin"
    clock = time.thread_time if isinstance(store, SQLiteStore) else time.perf_counter

    def page(side: str, ask: scale_asks.Ask) -> Callable[[], object]:
        """The page as the inbox gets it: the listing, its rows decoded into requests."""
        if side == BEFORE:
            return lambda: scale_asks.list_before(store, ask)
        if side == UNION:

            def through_union() -> object:
                with union_path():
                    return ask.run(store)

            return through_union
        return lambda: ask.run(store)

    def query(side: str, ask: scale_asks.Ask) -> Callable[[], object]:
        """The statement alone: run, rows fetched, nothing decoded."""
        if side == BEFORE:
            name = "list_requests_before"
            params = {
                "status": list(ask.statuses) if ask.statuses is not None else None,
                "tool": ask.tool,
                "agent": ask.agent,
                "app": ask.app,
                **dict.fromkeys(("created_by", "search")),
                "principals": principals,
                "viewer": viewer,
                "cursor": ask.cursor,
                "limit": PAGE_SIZE + 1,
            }
        else:
            statuses = list(ask.statuses) if ask.statuses is not None else None
            params = listing_params(
                statuses=statuses,
                viewer=viewer,
                principals=principals,
                tool=ask.tool,
                agent=ask.agent,
                app=ask.app,
                cursor=ask.cursor,
                limit=PAGE_SIZE + 1,
            )
            name = "list_requests" if side == UNION else listing_query(params)

        def statement() -> object:
            with store._read() as tx:
                return len(tx.all(name, **params))

        return statement

    def run(side: str, ask: scale_asks.Ask, what: str) -> Callable[[], object]:
        return page(side, ask) if what == "page" else query(side, ask)

    for ask in asks.values():  # warm, and the three give the same page
        for what in WHATS:
            pages = {side: run(side, ask, what)() for side in SIDES}
            assert len(set(pages.values())) == 1, pages
    keys = [(key, what, side) for key in asks for what in WHATS for side in SIDES]
    medians: dict[tuple[str, str, str], list[float]] = {key: [] for key in keys}
    for index in range(rounds):
        progress(f"{built.described}, {who}: round {index + 1}/{rounds}")
        samples: dict[tuple[str, str, str], list[float]] = {key: [] for key in keys}
        for turn in range(per_round):
            for key, ask in asks.items():
                for what in WHATS:
                    for side in ORDERS[turn % len(ORDERS)]:
                        samples[key, what, side].append(timed(run(side, ask, what), clock))
        for found, values in samples.items():
            medians[found].append(statistics.median(values))
    for key in asks:
        for what in WHATS:
            section = f"{built.described}: {who}, {LABELS[key]}, {WHATS[what]}"
            for side in SIDES:
                values = medians[key, what, side]
                report.add(
                    Metric(
                        section,
                        f"{who}_{key}_{what}_{side.replace(' ', '_')}_ms",
                        f"{side}: p50 (median of round medians)",
                        statistics.median(values),
                        "ms",
                        details={"min": min(values), "max": max(values), "rounds": values},
                    )
                )
            for other in (UNION, BEFORE):
                ratios = [
                    own / them
                    for own, them in zip(medians[key, what, OWN], medians[key, what, other], strict=True)
                ]
                report.add(
                    Metric(
                        section,
                        f"{who}_{key}_{what}_own_over_{other.split()[-1]}",
                        f"own queries / {other} (round by round, median)",
                        statistics.median(ratios),
                        "x",
                        Target("<=", 1.0),
                        {"min": min(ratios), "max": max(ratios)},
                    )
                )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="100,000 requests, fewer rounds")
    parser.add_argument("--requests", type=int, help="how many requests (default 200,000)")
    parser.add_argument("--members", action="store_true", help="alice's and olga's listings, not the admin's")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--dsn", default=scale.parse_args([]).dsn)
    parser.add_argument("--output", type=Path)
    options = parser.parse_args(argv)
    output = options.output or (MEMBER_RESULTS if options.members else RESULTS)
    viewers: tuple[str | None, ...] = MEMBERS if options.members else (None,)
    count = options.requests or (100_000 if options.quick else 200_000)
    rounds, per_round = (5, 6) if options.quick else (10, 12)
    skipped = (
        "PostgreSQL skipped: --no-postgres" if options.no_postgres else postgres_unavailable(options.dsn)
    )
    report = Report()
    builders: list[Callable[[], scale_data.Built]] = [lambda: scale_data.build_sqlite(count, False)]
    if not skipped:
        builders.append(lambda: scale_data.build_postgres(options.dsn, count, False))
    for build in builders:
        built = build()
        try:
            for viewer in viewers:
                measure(report, built, viewer, rounds, per_round)
        finally:
            built.store.close()
    if skipped:
        report.notes.append(skipped)
    report.notes.append(
        f"{rounds} rounds, each running every listing {per_round} times per side, the sides in each of "
        "their orders in turn; "
        f"{count:,} requests (bench/scale.py's mix and cache)."
    )
    write_results(report, machine_info(None if skipped else options.dsn), options.quick, output)
    whose = "Members'" if options.members else "An admin's"
    print_report(report, f"{whose} listings: their own queries against the union and the query from before")
    return 0


if __name__ == "__main__":
    sys.exit(main())
