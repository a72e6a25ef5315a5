"""Requests in the store: get-or-create, drafts, decisions (with quorum), expiry, cancel.

One concept a module: reading (`request_reads`, with who may see and decide a request),
creating and drafts (`request_creation`), ending without a decision (`request_closing`) and
deciding (`request_decisions`), and running planned reminders and escalations (`step_ops`).
"""

from __future__ import annotations

from ..decision_checks import may_decide, principals_of
from .request_creation import RequestCreation
from .request_decisions import RequestDecisions
from .step_ops import StepOps

__all__ = ["RequestOps", "may_decide", "principals_of"]


class RequestOps(RequestCreation, RequestDecisions, StepOps):
    """Every request operation a store has."""
