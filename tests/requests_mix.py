"""A mix of requests made through the store's own write paths (create, drafts, decisions,
cancel, expiry), and what listing them must give, computed the slow way in Python.

The tests of listings (tests/test_listing_matches.py, tests/test_query_plans.py) use it: the
listing queries read denormalised columns that the write paths keep, so the requests are made
the way signoff makes them, never inserted by hand.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import timedelta

from signoff import Approve, Reject, Request, RequestStatus
from signoff._util import utcnow
from signoff.requests import NewRequest
from signoff.rules.model import RequestRule
from signoff.store import Store

GROUPS = {"ops": ("olga", "bob"), "finance": ("olga",), "legal": ("carol",)}
PEOPLE = ("alice", "bob", "carol", "olga", "newbie")
"""newbie is named on no request and in no group."""
CREATORS = ("agent-1", "agent-2", "agent", "bob")
VIEWERS = (None, *PEOPLE, "agent-1")
APPROVER_SETS: tuple[tuple[str, ...], ...] = (
    (),
    (),
    ("alice",),
    ("alice",),
    ("alice", "group:ops"),
    ("group:finance",),
    ("bob",),
    ("carol", "group:legal"),
    ("group:ops",),
)
TOOLS = ("send_email", "wire_money", "search", "deploy")
AGENTS = ("travel", "ops-bot", None)
APPS = ("crm", None)
WORDS = ("invoice", "Quarterly report", "100%_done", "back\\slash", "café menu", "FOR you")
THREADS = 13


@dataclass(frozen=True)
class Listing:
    """What `Store.list_requests` is asked, and the requests it must give (newest first)."""

    viewer: str | None = None
    statuses: tuple[str, ...] | None = None
    tool: str | None = None
    agent: str | None = None
    app: str | None = None
    thread_id: str | None = None
    tool_call_id: str | None = None
    created_by: str | None = None
    approver: str | None = None
    search: str | None = None
    cursor: str | None = None
    limit: int = 50

    def run(self, store: Store) -> list[Request]:
        by_creator = {"created_by": self.created_by} if self.created_by is not None else {}
        return store.list_requests(
            status=list(self.statuses) if self.statuses is not None else None,
            tool=self.tool,
            agent=self.agent,
            app=self.app,
            thread_id=self.thread_id,
            tool_call_id=self.tool_call_id,
            approver=self.approver,
            search=self.search,
            visible_to=self.viewer,
            cursor=self.cursor,
            limit=self.limit,
            **by_creator,
        )

    def expected(self, every: list[Request], groups: dict[str, list[str]]) -> list[str]:
        """The ids the listing must give, by the rules as written (README: who sees what)."""
        found = [request for request in every if self.matches(request, groups)]
        found.sort(key=lambda request: request.id, reverse=True)
        return [request.id for request in found[: self.limit]]

    def matches(self, request: Request, groups: dict[str, list[str]]) -> bool:
        wanted = {
            "tool": (self.tool, request.tool_name),
            "agent": (self.agent, request.agent),
            "app": (self.app, request.app),
            "thread": (self.thread_id, request.thread_id),
            "tool call": (self.tool_call_id, request.tool_call_id),
            "creator": (self.created_by, request.created_by),
        }
        if any(asked is not None and asked != value for asked, value in wanted.values()):
            return False
        if self.statuses is not None and request.status.value not in self.statuses:
            return False
        if self.cursor is not None and request.id >= self.cursor:
            return False
        if self.approver is not None and self.approver not in request.rule.approvers:
            return False
        if self.search and not any(
            self.search.lower() in (text or "").lower()
            for text in (request.tool_name, request.description, request.thread_id, request.agent)
        ):
            return False
        return visible(request, self.viewer, groups)


def visible(request: Request, viewer: str | None, groups: dict[str, list[str]]) -> bool:
    """Admins (None) see everything; a user sees what they created, what names nobody, and
    what names them or one of their groups."""
    if viewer is None:
        return True
    principals = {viewer, *(f"group:{group}" for group, members in groups.items() if viewer in members)}
    approvers = request.rule.approvers
    return request.created_by == viewer or not approvers or bool(principals & set(approvers))


def make_mix(store: Store, count: int, *, seed: int = 29) -> list[str]:
    """`count` requests of every shape and status, made the way signoff makes them. Returns their ids."""
    rng = random.Random(seed)
    for group, members in GROUPS.items():
        for member in members:
            store.add_group_member(group, member, actor="admin")
    ids = []
    now = utcnow()
    for number in range(count):
        tool = rng.choice(TOOLS)
        fate = rng.random()
        past_deadline = fate > 0.93
        new = NewRequest(
            thread_id=f"thread-{number % THREADS}",
            tool_call_id=f"call-{number}",
            tool_name=tool,
            args={"n": number},
            description=f"{tool} {rng.choice(WORDS)}",
            deadline=now + (timedelta(seconds=-1) if past_deadline else timedelta(hours=1)),
            rule=RequestRule(approvers=rng.choice(APPROVER_SETS)),
            agent=rng.choice(AGENTS),
            app=rng.choice(APPS),
            drafting=0.25 < fate < 0.40,
            actor=rng.choice(CREATORS),
        )
        request, _ = store.create_request(new)
        ids.append(request.id)
        decider = request.rule.approvers[0] if request.rule.approvers else "alice"
        if decider.startswith("group:"):
            decider = GROUPS[decider.removeprefix("group:")][0]
        if 0.30 < fate < 0.40:
            store.update_draft(request.id, args={"more": True}, ready=True)
        if fate < 0.40 or past_deadline:
            continue
        if fate < 0.70:
            store.decide(request.id, Approve(), actor=decider)
        elif fate < 0.85:
            store.decide(request.id, Reject(message="no"), actor=decider)
        else:
            store.cancel(request.id, actor="agent-1", reason="run stopped")
    store.expire_due()
    return ids


def every_request(store: Store, ids: list[str]) -> list[Request]:
    found = store.get_requests(ids)
    assert len(found) == len(ids)
    assert {request.status for request in found.values()} == set(RequestStatus) - {
        RequestStatus.EDITED,
        RequestStatus.RESPONDED,
    }, "the mix should hold every status its write paths make"
    return list(found.values())
