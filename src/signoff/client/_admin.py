"""What `Client` offers an administrator: the audit log (filtered pages, verify, anchor) and
the rules' history, a revert, a preview of proposed rules."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import TypeVar

from ..audit import AuditAnchor, AuditEntry, AuditReport
from ..audit_filter import AuditFilter
from ..rules.history import RuleChange
from ..rules.model import RuleSet
from ..rules.preview import RulesPreview, SampleCall
from . import _admin_calls as admin_calls
from . import _calls as calls
from ._wire import Call

T = TypeVar("T")


class AdminCalls:
    """Mixed into `Client`, which sends the calls."""

    def _send(self, call: Call[T]) -> T:
        raise NotImplementedError

    # -- audit ----------------------------------------------------------------------------------

    def audit_entries(
        self,
        *,
        request_id: str | None = None,
        action: str | None = None,
        actor: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        tool: str | None = None,
        kind: str | None = None,
        after: int = 0,
        before: int | None = None,
        newest_first: bool = False,
        batch: int = 1000,
    ) -> Iterator[AuditEntry]:
        """A request's trail (whoever may see it), or the log as the filters keep it (admins),
        oldest first after `after`, or newest first before `before`."""
        if request_id is not None and not (since or until or tool or kind or newest_first):
            trail = self._send(calls.request_audit(request_id))
            yield from (entry for entry in trail if entry.seq > after and _matches(entry, action, actor))
            return
        where = AuditFilter(
            since=since, until=until, actor=actor, request_id=request_id, tool=tool, kind=kind, action=action
        )
        cursor: int | None = before if newest_first else after
        first = True
        while first or cursor is not None:
            first = False
            page, cursor = self._send(
                admin_calls.audit_page(
                    where, after=cursor or 0, before=cursor, newest_first=newest_first, limit=batch
                )
            )
            yield from page

    def verify_audit(self, *, anchor: AuditAnchor | None = None) -> AuditReport:
        """The server's check of its audit log (admins); with `anchor`, also that the log still extends it."""
        return self._send(calls.verify_audit(anchor))

    def audit_anchor(self) -> AuditAnchor:
        """The server's audit head as an anchor to keep elsewhere (admins)."""
        return self._send(calls.audit_anchor())

    # -- the rules' history -----------------------------------------------------------------------

    def rule_history(self, *, before: int | None = None, limit: int = 50) -> list[RuleChange]:
        """The changes to the server's rules, newest first (admins)."""
        changes, _ = self._send(admin_calls.rule_history(before=before, limit=limit))
        return changes

    def revert_rule_change(self, seq: int, *, actor: str = "", channel: str = "api") -> RuleChange:
        """Put back what change `seq` replaced (admins); the revert's own change."""
        return self._send(admin_calls.revert_rule_change(seq))

    def preview_rules(self, proposed: RuleSet, sample: SampleCall | None = None) -> RulesPreview:
        """What applying `proposed` on the server would change; nothing is stored."""
        return self._send(admin_calls.preview_rules(proposed, sample))


def _matches(entry: AuditEntry, action: str | None, actor: str | None) -> bool:
    return (action is None or entry.action == action) and (actor is None or entry.actor == actor)
