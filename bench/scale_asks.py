"""What bench/scale.py asks: the viewers (an admin, members, an agent) and the listings their pages
ask for (first pages, filtered pages, pages deep in the history), each also through the listing query
as it was before (`BEFORE_SQL`), to compare."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from signoff.identity import User
from signoff.server.inbox.rendering import OPEN_STATUSES, PAGE_SIZE, count_waiting
from signoff.store import SQLiteStore, Store
from signoff.store.queries import _PARAM

BEFORE_SQL = {
    "sqlite": r"""
SELECT r.* FROM requests r
WHERE (:status IS NULL OR r.status IN (SELECT value FROM json_each(:status)))
  AND (:tool IS NULL OR r.tool_name = :tool)
  AND (:agent IS NULL OR r.agent = :agent)
  AND (:app IS NULL OR r.app = :app)
  AND (:created_by IS NULL OR r.created_by = :created_by)
  AND (:cursor IS NULL OR r.id < :cursor)
  AND (:search IS NULL OR r.tool_name LIKE :search ESCAPE '\' OR r.description LIKE :search ESCAPE '\'
       OR r.thread_id LIKE :search ESCAPE '\' OR r.agent LIKE :search ESCAPE '\')
  AND (:principals IS NULL
       OR r.created_by = :viewer
       OR NOT EXISTS (SELECT 1 FROM request_approvers a WHERE a.request_id = r.id)
       OR EXISTS (SELECT 1 FROM request_approvers a
                  WHERE a.request_id = r.id AND a.principal IN (SELECT value FROM json_each(:principals))))
ORDER BY r.id DESC
LIMIT :limit""",
    "postgres": r"""
SELECT r.* FROM requests r
WHERE (CAST(:status AS text[]) IS NULL OR r.status = ANY(CAST(:status AS text[])))
  AND (CAST(:tool AS text) IS NULL OR r.tool_name = :tool)
  AND (CAST(:agent AS text) IS NULL OR r.agent = :agent)
  AND (CAST(:app AS text) IS NULL OR r.app = :app)
  AND (CAST(:created_by AS text) IS NULL OR r.created_by = :created_by)
  AND (CAST(:cursor AS text) IS NULL OR r.id < :cursor)
  AND (CAST(:search AS text) IS NULL OR r.tool_name ILIKE :search OR r.description ILIKE :search
       OR r.thread_id ILIKE :search OR r.agent ILIKE :search)
  AND (CAST(:principals AS text[]) IS NULL
       OR r.created_by = :viewer
       OR NOT EXISTS (SELECT 1 FROM request_approvers a WHERE a.request_id = r.id)
       OR EXISTS (SELECT 1 FROM request_approvers a
                  WHERE a.request_id = r.id AND a.principal = ANY(CAST(:principals AS text[]))))
ORDER BY r.id DESC
LIMIT :limit""",
}
"""`list_requests` as it was (with the access package's `created_by` filter), reduced to the
filters measured here."""


def install_before(store: Store) -> None:
    """Give the store the old query under a name of its own."""
    dialect = "sqlite" if isinstance(store, SQLiteStore) else "postgres"
    text = BEFORE_SQL[dialect].strip()
    if dialect == "postgres":
        text = _PARAM.sub(r"%(\1)s", text.replace("%", "%%"))
    store._queries = {**store._queries, "list_requests_before": text}  # type: ignore[attr-defined]


def list_before(store: Store, ask: Ask) -> int:
    principals = None
    if ask.viewer is not None:
        principals = [ask.viewer, *(f"group:{group}" for group in store.groups_of(ask.viewer))]
    with store._read() as tx:
        rows = tx.all(
            "list_requests_before",
            status=list(ask.statuses) if ask.statuses is not None else None,
            tool=ask.tool,
            agent=ask.agent,
            app=ask.app,
            created_by=ask.created_by,
            cursor=ask.cursor,
            search=None,
            principals=principals,
            viewer=ask.viewer,
            limit=PAGE_SIZE + 1,
        )
        return len([store._request(row) for row in rows])


@dataclass(frozen=True)
class Viewer:
    key: str
    label: str
    user: User
    created_by: str | None = None

    @property
    def visible_to(self) -> str | None:
        return None if self.user.is_admin else self.user.name


VIEWERS = (
    Viewer("admin", "admin (sees everything)", User(name="admin", role="admin")),
    Viewer("newbie", "member named on no request", User(name="newbie", role="member")),
    Viewer("alice", "alice, named on 250k mostly decided", User(name="alice", role="member")),
    Viewer("olga", "olga, in two groups", User(name="olga", role="member")),
    Viewer(
        "agent", "agent-07 (its own requests)", User(name="agent-07", role="agent"), created_by="agent-07"
    ),
)


@dataclass(frozen=True)
class Ask:
    """One listing as a page asks for it."""

    viewer: str | None
    statuses: tuple[str, ...] | None = None
    cursor: str | None = None
    created_by: str | None = None
    search: str | None = None
    tool: str | None = None
    agent: str | None = None
    app: str | None = None

    def run(self, store: Store) -> int:
        by_creator = {"created_by": self.created_by} if self.created_by is not None else {}
        return len(
            store.list_requests(
                status=list(self.statuses) if self.statuses is not None else None,
                visible_to=self.viewer,
                cursor=self.cursor,
                search=self.search,
                tool=self.tool,
                agent=self.agent,
                app=self.app,
                limit=PAGE_SIZE + 1,
                **by_creator,
            )
        )


@dataclass(frozen=True)
class Query:
    key: str
    label: str
    run: Callable[[Store], object]
    before: Callable[[Store], object] | None = None
    target: bool = True


def queries_for(viewer: Viewer, middle: str) -> list[Query]:
    def ask(**fields: Any) -> Ask:
        return Ask(viewer=viewer.visible_to, created_by=viewer.created_by, **fields)

    inbox = ask(statuses=tuple(OPEN_STATUSES))
    first = ask()
    later = ask(cursor=middle)
    rejected = ask(statuses=("rejected",))
    found = [
        Query("inbox", "inbox, first page", inbox.run, lambda store: list_before(store, inbox)),
        Query("history", "history, first page", first.run, lambda store: list_before(store, first)),
        Query("later", "history, a page 90 days back", later.run, lambda store: list_before(store, later)),
        Query("status", "history of one status", rejected.run, lambda store: list_before(store, rejected)),
    ]
    if not viewer.user.is_agent:
        found.insert(1, Query("badge", "nav badge", lambda store: count_waiting(store, viewer.user)))
    for key, label, fields in FILTERED:
        narrowed = ask(**fields, cursor=middle) if key.endswith("_later") else ask(**fields)
        found.append(
            Query(key, label, narrowed.run, lambda store, narrowed=narrowed: list_before(store, narrowed))
        )
    return found


FILTERED = (
    ("tool", "history of a common tool (a quarter of requests)", {"tool": "tool_00"}),
    ("tool_rare", "history of a rare tool (1 in 125)", {"tool": "tool_29"}),
    ("tool_later", "history of a tool (1 in 24), 90 days back", {"tool": "tool_05"}),
    ("agent_filter", "history of one agent (1 in 20)", {"agent": "agent-03"}),
    ("app", "history of one app (1 in 5)", {"app": "crm"}),
    ("app_pending", "inbox of one app", {"app": "crm", "statuses": tuple(OPEN_STATUSES)}),
)
"""The history and inbox filters a person picks (bench/scale_data.py's mix: tool_NN drawn 1/(N+1),
agents Pareto-drawn, five apps alike), first pages and one deep in the history."""


def extras_for(viewer: Viewer) -> list[Query]:
    search = Ask(viewer=viewer.visible_to, created_by=viewer.created_by, search="quarterly")
    found = [Query("search", "text search (newest 10,000)", search.run, target=False)]
    if not viewer.user.is_agent:
        found.append(
            Query(
                "open_counts",
                "overview: open by tool and agent",
                lambda store: store.open_counts(visible_to=viewer.visible_to),
                target=False,
            )
        )
    return found
