"""Reading requests: by id, by (creator, thread_id, tool_call_id), listings, a request's
decisions; and who may see and decide one."""

from __future__ import annotations

from typing import Any

from ..decision_checks import may_decide, principals_of
from ..decisions import DecisionRecord
from ..errors import NotAnApprover, RequestNotFound
from ..requests import LOCAL_CREATOR, Request
from .core import StoreCore, Tx
from .listing import SEARCH_WINDOW, listing_params, listing_query


class RequestReads(StoreCore):
    def get_request(self, request_id: str) -> Request:
        with self._read() as tx:
            row = tx.one("get_request", id=request_id)
            if row is None:
                raise RequestNotFound(f"no request with id {request_id!r}")
            return self._with_approvals(tx, row)

    def get_requests(self, request_ids: list[str]) -> dict[str, Request]:
        """Several requests in one read, by id; unknown ids are left out."""
        if not request_ids:
            return {}
        with self._read() as tx:
            rows = tx.all("get_requests", ids=list(dict.fromkeys(request_ids)))
            return {row["id"]: self._with_approvals(tx, row) for row in rows}

    def get_request_for(self, request_id: str, user: str, *, channel: str = "api") -> Request:
        """The request, if `user` may see it (an approver; when it names none, its requester, or
        anyone when it has none); otherwise NotAnApprover, and the attempt is audited."""
        request = self.get_request(request_id)
        groups = self.groups_of(user) if request.rule.approvers else ()
        if not may_decide(request, user, groups):
            refused = NotAnApprover(f"{user} is not an approver of request {request_id}")
            self.record(
                "request.view_refused",
                actor=user,
                channel=channel,
                request_id=request_id,
                data={"reason": "not an approver"},
            )
            refused.audited = True
            raise refused
        return request

    def find_request(
        self, thread_id: str, tool_call_id: str, *, created_by: str = LOCAL_CREATOR
    ) -> Request | None:
        """The request `created_by` made for (thread_id, tool_call_id), if any."""
        with self._read() as tx:
            row = tx.one(
                "find_request", created_by=created_by, thread_id=thread_id, tool_call_id=tool_call_id
            )
            return self._with_approvals(tx, row) if row is not None else None

    def list_requests(
        self,
        *,
        status: str | list[str] | None = None,
        tool: str | None = None,
        agent: str | None = None,
        app: str | None = None,
        thread_id: str | None = None,
        tool_call_id: str | None = None,
        approver: str | None = None,
        search: str | None = None,
        visible_to: str | None = None,
        created_by: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> list[Request]:
        """Newest first. `visible_to` keeps only what that user may see (as an approver, or as the
        one who asked); `created_by` only what that user (an agent) created; `approver` keeps
        requests naming that principal; `search` matches tool, description, thread and agent
        (case-insensitive substring) among the newest `listing.SEARCH_WINDOW` requests before the
        cursor; `cursor` is the last id seen. Every listing reads index ranges (see `listing`)."""
        statuses = [status] if isinstance(status, str) else status
        principals = principals_of(visible_to, self.groups_of(visible_to)) if visible_to is not None else None
        params = listing_params(
            statuses=statuses,
            viewer=visible_to,
            principals=principals,
            tool=tool,
            agent=agent,
            app=app,
            thread_id=thread_id,
            tool_call_id=tool_call_id,
            created_by=created_by,
            approver=approver,
            search=search,
            cursor=cursor,
            limit=limit,
        )
        with self._read() as tx:
            if params["search"] is not None:
                floor = tx.one("search_floor", cursor=cursor, window=SEARCH_WINDOW)
                params["search_floor"] = floor["id"] if floor is not None else ""
            return [self._with_approvals(tx, row) for row in tx.all(listing_query(params), **params)]

    def decisions(self, request_id: str) -> list[DecisionRecord]:
        """Every decision on the request: a quorum's votes in order, or the one decision."""
        with self._read() as tx:
            votes = [self._decision_record(row) for row in tx.all("decisions_for", request_id=request_id)]
            if votes:
                return votes
            row = tx.one("get_request", id=request_id)
        if row is None:
            raise RequestNotFound(f"no request with id {request_id!r}")
        decision = self._request(row).decision
        return [decision] if decision is not None else []

    def open_requests_in_thread(self, thread_id: str, *, created_by: str = LOCAL_CREATOR) -> list[str]:
        """The open requests of one creator's run."""
        with self._read() as tx:
            rows = tx.all("open_in_thread", created_by=created_by, thread_id=thread_id)
            return [row["id"] for row in rows]

    def _with_approvals(self, tx: Tx, row: dict[str, Any]) -> Request:
        rule_quorum = int(row["rule"].get("quorum", 1))
        approvals: tuple[str, ...] = ()
        if rule_quorum > 1:
            approvals = tuple(r["actor"] for r in tx.all("approvals_for", request_id=row["id"]))
        return self._request(row, approvals)

    def count_auto_decisions(self, thread_id: str, *, created_by: str = LOCAL_CREATOR) -> int:
        """How many unattended auto-decisions one creator's run has had."""
        with self._read() as tx:
            row = tx.one("count_auto_decisions", created_by=created_by, thread_id=thread_id)
            return int(row["n"]) if row else 0

    def count_auto_rounds(
        self, thread_id: str, *, besides: str | None = None, created_by: str = LOCAL_CREATOR
    ) -> int:
        """How many rounds (model turns, `ToolCall.round`) of one creator's run were auto-decided,
        other than `besides`: what `max_auto_resume` caps. A request without a round counts alone."""
        with self._read() as tx:
            row = tx.one("count_auto_rounds", created_by=created_by, thread_id=thread_id, besides=besides)
            return int(row["n"]) if row else 0

    def _locked(self, tx: Tx, request_id: str) -> Request:
        row = tx.one("lock_request", id=request_id)
        if row is None:
            raise RequestNotFound(f"no request with id {request_id!r}")
        return self._with_approvals(tx, row)
