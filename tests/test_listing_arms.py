"""`list_visible`'s arms are written out from one arm (store/queries.py): the text SQLite runs
is the one written by hand before, and every variant has an arm per status and range."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff.store.listing import ALL_STATUSES, VISIBLE_PAGE, VISIBLE_PRINCIPALS
from signoff.store.queries import Dialect, load_queries

HAND_WRITTEN = Path(__file__).with_name("list_visible_sqlite.sql")
JOINED_BY = {"sqlite": "\nUNION ", "postgres": "\nUNION ALL "}


def words(sql: str) -> list[str]:
    return sql.split()


def test_sqlite_list_visible_is_the_hand_written_statement() -> None:
    lines = HAND_WRITTEN.read_text(encoding="utf-8").splitlines()
    hand_written = "\n".join(line for line in lines if not line.startswith("--")).rstrip().rstrip(";")
    assert words(load_queries("sqlite")["list_visible"]) == words(hand_written)


@pytest.mark.parametrize("dialect", ["sqlite", "postgres"])
@pytest.mark.parametrize("name", ["list_visible", "list_visible_after", "list_visible_narrowed"])
def test_every_variant_reads_each_status_of_each_range(dialect: Dialect, name: str) -> None:
    queries = load_queries(dialect)
    for slots in range(1, VISIBLE_PRINCIPALS + 1):
        variant = name if slots == VISIBLE_PRINCIPALS else f"{name}_{slots}"
        sql = queries[variant]
        assert sql.count(JOINED_BY[dialect]) + 1 == len(ALL_STATUSES) * (2 + slots), variant
        for status in ALL_STATUSES:
            assert sql.count(f"status = '{status}'") == 2 + slots, (variant, status)
        read = "'$[{}]'" if dialect == "sqlite" else "[{} + 1]"
        assert all(read.format(slot) in sql for slot in range(slots)), variant
        assert read.format(slots) not in sql, variant


@pytest.mark.parametrize("dialect", ["sqlite", "postgres"])
def test_only_the_narrowed_variants_check_the_filters(dialect: Dialect) -> None:
    queries = load_queries(dialect)
    assert ":tool" not in queries["list_visible"] and "(tool)" not in queries["list_visible"]
    narrowed = queries["list_visible_narrowed"]
    per_arm = len(ALL_STATUSES) * (2 + VISIBLE_PRINCIPALS)
    assert narrowed.count("tool_name = ") == per_arm


@pytest.mark.parametrize("name", ["list_visible", "list_visible_after_2"])
def test_postgres_merges_up_to_the_longest_page_it_is_asked_for(name: str) -> None:
    """A constant, so that a prepared statement settles on its generic plan (see the statement)."""
    assert f"LIMIT {VISIBLE_PAGE})" in load_queries("postgres")[name]
