"""Acting on the store directly as a person (the local CLI, a console prompt): the name given
(`--as`, a gate's `actor`) must be one of the store's people, as the server's callers must be.

A store that has users holds who is who: there, a decision, a cancel or a re-run by a name
that is no user, an agent or a disabled person is refused, in the server's words, and audited.
A store without any user (one person's laptop: nobody was ever added) has no one to check a
name against, and takes it as given; even there, the agent that asked never decides its own
request. A `Client` acts as its token's user, whom the server checks.
"""

from __future__ import annotations

from typing import Any

from ..decisions import Decision
from ..errors import PermissionDenied
from ..grants import GrantAsk
from ..identity import not_a_person
from ..requests import Execution, Request
from .execution_ops import ExecutionOps
from .identity_ops import IdentityOps
from .request_ops import RequestOps

DECISION_REFUSED = "decision.refused"
CHANGE_REFUSED = "request.change_refused"


class ActingOps(RequestOps, ExecutionOps, IdentityOps):
    def check_person(
        self,
        name: str,
        *,
        channel: str,
        request: Request | None = None,
        action: str = DECISION_REFUSED,
        data: dict[str, Any] | None = None,
    ) -> None:
        """Raise PermissionDenied (audited under `action`) unless `name` may act as a person
        here: an existing, enabled member or admin where the store has users, and never the
        agent that created `request`."""
        if request is not None and name == request.created_by:
            reason: str | None = f"{name} is an agent; only people decide"
        elif self.count_users() > 0:
            reason = not_a_person(name, self.get_user(name))
        else:
            reason = None
        if reason is not None:
            request_id = request.id if request is not None else None
            raise self._refused(reason, name, channel, request_id, action, data)

    def decide_as_person(
        self, request_id: str, decision: Decision, *, actor: str, channel: str, grant: GrantAsk | None = None
    ) -> Request:
        """`decide`, by a person named here (see `check_person`), with a standing `grant` if given."""
        request = self.get_request(request_id)
        self.check_person(actor, channel=channel, request=request, data={"type": decision.type})
        return self.decide(request_id, decision, actor=actor, channel=channel, grant=grant)

    def cancel_as_person(
        self, request_id: str, *, actor: str, channel: str, reason: str | None = None
    ) -> Request:
        """`cancel`, by a user named here: the agent that asked, or an admin (as on the server)."""
        request = self.get_request(request_id)
        if self.count_users() > 0:
            user = self.get_user(actor)
            if user is None or user.disabled or not (user.is_admin or actor == request.created_by):
                said = f"only the agent that asked (or an admin) may cancel request {request_id}"
                raise self._refused(said, actor, channel, request_id, CHANGE_REFUSED, None)
        return self.cancel(request_id, actor=actor, channel=channel, reason=reason)

    def rerun_as_person(self, request_id: str, *, actor: str, channel: str) -> Execution:
        """`reset_execution`, by a person named here who may see the request."""
        request = self.get_request_for(request_id, actor, channel=channel)
        self.check_person(actor, channel=channel, request=request, action=CHANGE_REFUSED)
        return self.reset_execution(request_id, actor=actor, channel=channel)

    def _refused(
        self,
        reason: str,
        actor: str,
        channel: str,
        request_id: str | None,
        action: str,
        data: dict[str, Any] | None,
    ) -> PermissionDenied:
        """The refusal, written to the audit log (and marked so)."""
        refused = PermissionDenied(reason)
        entry = {"reason": reason, "error": type(refused).__name__, **(data or {})}
        self.record(action, actor=actor, channel=channel, request_id=request_id, data=entry)
        refused.audited = True
        return refused
