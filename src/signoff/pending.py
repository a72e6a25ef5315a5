"""The suspending mode's signals: a call whose request waits for a person (`Pending`), and the
exception that ends a run until then (`Suspended`)."""

from __future__ import annotations

from dataclasses import dataclass

from .outcome import Outcome
from .requests import Request


@dataclass(frozen=True)
class Pending:
    """A request waiting for a person. Replaying the same call later finds its decision."""

    request: Request

    @property
    def request_id(self) -> str:
        return self.request.id

    @property
    def thread_id(self) -> str:
        return self.request.thread_id

    @property
    def tool_call_id(self) -> str:
        return self.request.tool_call_id


class Suspended(Exception):
    """The call waits for a person: end the run, keep its state, replay it later.

    Not a `SignoffError`: nothing went wrong.
    """

    def __init__(self, pending: Pending) -> None:
        self.pending = pending
        super().__init__(f"waiting for a decision on request {pending.request_id}")


def or_suspend(found: Outcome | Pending) -> Outcome:
    """The outcome, or `Suspended` when the call still waits."""
    if isinstance(found, Pending):
        raise Suspended(found)
    return found
