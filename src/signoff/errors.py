"""Every error signoff raises, under one root.

SignoffError
├── ConfigError                  rules, templates or CEL conditions that cannot be used
├── StoreError                   the database could not do what was asked
│   ├── StoreUnavailable         it cannot be used right now: full, read-only, unreachable (503)
│   │   └── LowDiskSpace         its disk has less free space than the server's threshold (/healthz 503)
│   ├── MigrationError
│   └── AuditBroken              the audit log does not end at its head: it cannot be anchored (409)
├── RequestError                 something was asked of a request that cannot be done
│   ├── RequestNotFound          (404)
│   ├── NotAnApprover            (403)
│   │   └── SeparationOfDuties   four eyes: the requester (or the agent's owner) may not approve
│   ├── RequestConflict          (409)
│   │   ├── AlreadyDecided
│   │   ├── ArgsMismatch         an execution claim for other args than were decided
│   │   ├── NotBatchable         its rule says `batch: false`: decided alone, never in a batch
│   │   └── RequestNotReady      still drafting
│   ├── RequestExpired           (410)
│   └── InvalidDecision          (422)
│       ├── DecisionNotAllowed
│       ├── InvalidArguments     args or an answer that break the JSON Schema
│       └── GrantNotAllowed      a standing grant the request's rule does not allow
├── ReviewTimeout                nobody decided within the caller's timeout (the request stays pending)
├── ExecutionError
│   ├── ExecutionInProgress      another live process holds the claim
│   ├── ExecutionInDoubt         a claim was left running by a process that died
│   └── ToolFailed               an earlier run raised; it is not re-run on its own
├── UnattendedError
│   ├── ApprovalRequiredUnattended   the rule says "fail" for unattended runs
│   └── AutoResumeExceeded           more auto-decided rounds than `max_auto_resume` in one run
├── AccessError
│   ├── NotAuthenticated         no valid token, session or link (401)
│   ├── PermissionDenied         authenticated, but this user may not do this (403)
│   └── TooManySignIns           too many failed sign-ins from this address of late (429)
├── InvalidInput                 a request body or parameter that cannot be used (422)
│   ├── IdempotencyKeyReused     an Idempotency-Key sent again with a different call (422)
│   ├── AlreadyExists            a name that is taken, such as a user's (409)
│   ├── PayloadTooLarge          a body or value over the size limit (413)
│   └── CodeRefused              a verification code that is wrong, expired, used or out of tries
├── TooSoon                      asked again before the wait is over (429)
├── RulesChanged                 the rules changed since they were read: nothing was applied (409)
├── Conflict                     not in the state things are in now: changed meanwhile, disabled (409)
├── NotFound                     no such user, token or rule entry (404)
└── RemoteError                  the signoff server could not be reached or answered oddly
    └── ServerUnavailable        still unreachable or unavailable (502, 503, 504) when the call gave up

`Suspended` (in `signoff.pending`) is not here: it is a signal that a decision is pending, not an error.
Each class's docstring is its default message.
"""

from __future__ import annotations

from typing import ClassVar


class SignoffError(Exception):
    """A signoff operation failed."""

    status_code: ClassVar[int] = 500
    audited: bool = False
    """Set once this refusal is in the audit log, so that it is written there once."""

    def __init__(self, message: str | None = None) -> None:
        self.message = message or (type(self).__doc__ or "").strip()
        super().__init__(self.message)


class ConfigError(SignoffError):
    """The configuration is invalid."""

    status_code = 422


class StoreError(SignoffError):
    """The store could not complete the operation."""


class StoreUnavailable(StoreError):
    """The database cannot be used right now (full, read-only, locked or unreachable); nothing
    was changed. Try again shortly."""

    status_code = 503


class LowDiskSpace(StoreUnavailable):
    """The database's disk is nearly full: less free space than the server's threshold
    (`signoff serve --min-free-disk`). Writes still work, until they do not."""


class MigrationError(StoreError):
    """The database schema could not be migrated."""


class AuditBroken(StoreError):
    """The audit log does not match its recorded head; `signoff audit verify` says how."""

    status_code = 409


class RequestError(SignoffError):
    """The request cannot be acted on."""

    status_code = 400


class RequestNotFound(RequestError):
    """No such request."""

    status_code = 404


class NotAnApprover(RequestError):
    """You are not an approver of this request."""

    status_code = 403


class SeparationOfDuties(NotAnApprover):
    """Four eyes: the rule keeps you from approving this request; someone else must approve it
    (you may still reject it)."""


class RequestConflict(RequestError):
    """The request is not in a state that allows this."""

    status_code = 409


class ArgsMismatch(RequestConflict):
    """An execution claim would run the call with other args than were decided (DESIGN §14)."""


class NotBatchable(RequestConflict):
    """The request's rule says it is decided on its own (`batch: false`), not in a batch."""


class AlreadyDecided(RequestConflict):
    """The request has already been decided."""


class RequestNotReady(RequestConflict):
    """The request is still drafting: its arguments are not complete yet."""


class RequestExpired(RequestError):
    """The request has expired."""

    status_code = 410


class InvalidDecision(RequestError):
    """The decision is invalid."""

    status_code = 422


class DecisionNotAllowed(InvalidDecision):
    """This decision type is not allowed for this request."""


class InvalidArguments(InvalidDecision):
    """The arguments do not match the tool's JSON Schema."""


class GrantNotAllowed(InvalidDecision):
    """The request's rule does not allow this standing grant."""


class ReviewTimeout(SignoffError):
    """No decision arrived before the timeout; the request is still pending."""

    status_code = 504


class ExecutionError(SignoffError):
    """The tool's execution could not proceed."""

    status_code = 409


class ExecutionInProgress(ExecutionError):
    """Another live process is running this tool call."""


class ExecutionInDoubt(ExecutionError):
    """A process died while running this tool call; it is not re-run unless the tool is idempotent
    or a person resets it."""


class ToolFailed(ExecutionError):
    """An earlier run of this tool call failed; it is not re-run unless the tool is idempotent
    or a person resets it."""


class UnattendedError(SignoffError):
    """An unattended run needed a person."""

    status_code = 409


class ApprovalRequiredUnattended(UnattendedError):
    """This call needs approval, and unattended runs are configured to fail."""


class AutoResumeExceeded(UnattendedError):
    """An unattended run auto-resumed more rounds (model turns) than allowed: seed 004's job error."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(f"HITL auto-resume exceeded {limit} attempts")


class AccessError(SignoffError):
    """Access was refused."""

    status_code = 403


class NotAuthenticated(AccessError):
    """Authentication required: send a valid API token, session or link."""

    status_code = 401


class PermissionDenied(AccessError):
    """You may not do this."""


class TooManySignIns(AccessError):
    """Too many failed sign-ins from this address; try again later."""

    status_code = 429

    def __init__(self, message: str | None = None, *, retry_after: int = 0) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        """Seconds until this address may try again (the `Retry-After` header)."""


class InvalidInput(SignoffError):
    """The input is invalid."""

    status_code = 422


class IdempotencyKeyReused(InvalidInput):
    """This Idempotency-Key was already used for a different call; use a fresh key for each new call."""


class AlreadyExists(InvalidInput):
    """Something by that name exists already."""

    status_code = 409


class PayloadTooLarge(InvalidInput):
    """The request body or a value in it is over the size limit."""

    status_code = 413


class CodeRefused(InvalidInput):
    """The code does not verify this address (wrong, expired, already used, or out of tries)."""


class TooSoon(SignoffError):
    """That was asked for too recently; try again in a moment."""

    status_code = 429

    def __init__(self, message: str | None = None, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        """Seconds until it may be asked again (the answer's `Retry-After`)."""


class Conflict(SignoffError):
    """That cannot be done in the state things are in now: it changed meanwhile, or is disabled."""

    status_code = 409


class RemoteError(SignoffError):
    """The signoff server could not be reached or gave an unexpected answer."""

    status_code = 502


class ServerUnavailable(RemoteError):
    """The signoff server stayed unreachable or unavailable (502, 503, 504) for as long as the
    call could wait (a gate's calls: until the request's deadline); the call was given up."""

    status_code = 503


class RulesChanged(SignoffError):
    """The rules changed since they were read; nothing was applied. Look at them again first."""

    status_code = 409


class NotFound(SignoffError):
    """Not found."""

    status_code = 404
