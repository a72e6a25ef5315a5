"""Store cycles (create_request + decide) and rounds that alternate the sides measured."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

from raw_cycles import create_postgres_tables, raw_postgres_cycle
from signoff import Approve
from signoff._util import utcnow
from signoff.requests import NewRequest
from signoff.store import Store

EMAIL_ARGS = {"to": "bob@example.com", "subject": "Quarterly report", "body": "Numbers attached."}


def new_request(index: int) -> NewRequest:
    return NewRequest(
        thread_id="bench-cycles",
        tool_call_id=f"call-{index}",
        tool_name="send_email",
        args=EMAIL_ARGS,
        description="Send an email to bob@example.com",
        deadline=utcnow() + timedelta(hours=1),
    )


def signoff_cycle(store: Store) -> Callable[[int], None]:
    def cycle(index: int) -> None:
        request, _ = store.create_request(new_request(index))
        store.decide(request.id, Approve(), actor="alice", channel="bench")

    return cycle


def cycles_per_second(cycle: Callable[[int], None], numbers: Iterator[int], cycles: int) -> float:
    start = time.perf_counter()
    for _ in range(cycles):
        cycle(next(numbers))
    return cycles / (time.perf_counter() - start)


def alternate(sides: dict[str, Callable[[int], None]], cycles: int, rounds: int) -> dict[str, list[float]]:
    """Run the sides in turns (A B, B A, ...) after a warm-up; cycles/s of every round per side."""
    numbers = itertools.count()
    names = list(sides)
    for name in names:
        cycles_per_second(sides[name], numbers, max(cycles // 5, 10))
    rates: dict[str, list[float]] = {name: [] for name in names}
    for round_number in range(rounds):
        for name in names if round_number % 2 == 0 else reversed(names):
            rates[name].append(cycles_per_second(sides[name], numbers, cycles))
    return rates


@contextmanager
def postgres_cycles(dsn: str, schema: str) -> Iterator[dict[str, Callable[[int], None]]]:
    """signoff's cycle and the raw psycopg one, each on its own connection to `schema`."""
    import psycopg

    from signoff.store.postgres import PostgresStore

    store = PostgresStore(dsn, schema=schema, max_size=4)
    raw = psycopg.connect(dsn, options=f"-c search_path={schema}")
    try:
        create_postgres_tables(raw)
        yield {"signoff": signoff_cycle(store), "raw": raw_postgres_cycle(raw)}
    finally:
        store.close()
        raw.close()
