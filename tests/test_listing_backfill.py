"""Requests stored before listings read index ranges (migration listing_indexes) are listed
right after it: the migration fills in what each request says about its approvers and copies
each request's status onto its approver rows, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from signoff._util import to_iso
from signoff.store import Store

from .old_schema import Run, migrated_store
from .requests_mix import APPROVER_SETS, CREATORS, GROUPS, VIEWERS, Listing

BEFORE = 2
"""The last migration before listings read index ranges."""
STATUSES = ("pending", "drafting", "approved", "rejected", "expired", "cancelled")
COLUMNS = (
    "id, thread_id, tool_call_id, tool_name, args, status, description, rule, created_at, updated_at, "
    "deadline, decided_at, created_by"
)


def old_rows(count: int) -> tuple[list[tuple[Any, ...]], list[tuple[str, str]]]:
    """Requests and approver rows as the store wrote them before the migration."""
    rng = random.Random(8)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    requests, approvers = [], []
    for number in range(count):
        status = rng.choice(STATUSES)
        chosen = rng.choice(APPROVER_SETS)
        created = start + timedelta(minutes=number)
        decided = None if status in ("pending", "drafting") else to_iso(created + timedelta(minutes=1))
        rule = json.dumps({"approvers": list(chosen)} if chosen else {})
        requests.append(
            (
                f"req_old{number:05d}",
                f"thread-{number % 7}",
                f"call-{number}",
                "send_email",
                "{}",
                status,
                f"send mail {number}",
                rule,
                to_iso(created),
                to_iso(created),
                to_iso(created + timedelta(days=3650)),
                decided,
                rng.choice(CREATORS),
            )
        )
        approvers.extend((f"req_old{number:05d}", principal) for principal in chosen)
    return requests, approvers


def fill(run: Run, marker: str) -> None:
    requests, approvers = old_rows(300)
    values = ", ".join([marker] * 13)
    for row in requests:
        run(f"INSERT INTO requests ({COLUMNS}) VALUES ({values})", row)
    for row in approvers:
        run(f"INSERT INTO request_approvers (request_id, principal) VALUES ({marker}, {marker})", row)
    for group, members in GROUPS.items():
        for member in members:
            run(
                f"INSERT INTO group_members (group_name, user_name) VALUES ({marker}, {marker})",
                (group, member),
            )


@pytest.fixture(params=["sqlite", "postgres"])
def migrated(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A store whose rows were written before the migration, then opened (so migrated)."""
    with migrated_store(request.param, tmp_path, before=BEFORE, fill=fill) as store:
        yield store


def test_old_requests_are_listed_by_the_rules(migrated: Store) -> None:
    every = list(migrated.get_requests([f"req_old{number:05d}" for number in range(300)]).values())
    assert len(every) == 300
    groups = migrated.group_members()
    for viewer in VIEWERS:
        for statuses in (None, ("pending", "drafting"), ("rejected",)):
            listing = Listing(viewer=viewer, statuses=statuses, limit=1000)
            assert [request.id for request in listing.run(migrated)] == listing.expected(every, groups)
            assert listing.expected(every, groups), "every viewer should see some of the old requests"


def test_old_requests_follow_their_decisions(migrated: Store) -> None:
    """A request stored before the migration, decided after it, leaves its approvers' inboxes."""
    from signoff import Approve

    waiting = migrated.list_requests(status="pending", visible_to="carol", limit=1000)
    named = [request for request in waiting if "carol" in request.rule.approvers]
    assert named
    migrated.decide(named[0].id, Approve(), actor="carol")
    still = {
        request.id for request in migrated.list_requests(status="pending", visible_to="carol", limit=1000)
    }
    assert named[0].id not in still
    decided = migrated.list_requests(status="approved", visible_to="carol", limit=1000)
    assert named[0].id in {request.id for request in decided}
