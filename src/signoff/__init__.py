"""signoff: the human approval layer for AI agents' tool calls.

The names below are loaded when first used (PEP 562), so that `import signoff` and the command
line pay only for what they touch: the remote client's HTTP stack, the terminal UIs, the rules'
CEL engine stay unloaded until something needs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_exports
from .errors import (
    AlreadyDecided,
    AlreadyExists,
    ApprovalRequiredUnattended,
    ArgsMismatch,
    AuditBroken,
    AutoResumeExceeded,
    ConfigError,
    DecisionNotAllowed,
    ExecutionError,
    ExecutionInDoubt,
    ExecutionInProgress,
    GrantNotAllowed,
    IdempotencyKeyReused,
    InvalidArguments,
    InvalidDecision,
    InvalidInput,
    MigrationError,
    NotAnApprover,
    NotAuthenticated,
    NotBatchable,
    PayloadTooLarge,
    PermissionDenied,
    RemoteError,
    RequestConflict,
    RequestError,
    RequestExpired,
    RequestNotFound,
    RequestNotReady,
    ReviewTimeout,
    SeparationOfDuties,
    ServerUnavailable,
    SignoffError,
    StoreError,
    StoreUnavailable,
    ToolFailed,
    TooManySignIns,
    UnattendedError,
)

if TYPE_CHECKING:
    from .audit import AuditAnchor, AuditEntry, AuditReport
    from .backend import Backend
    from .backends import open_backend
    from .batch import BatchFilter, BatchResult, batch_decision, check_batch_ids
    from .calls import Scope, ToolCall
    from .client import AsyncClient, Client
    from .console import ConfirmationUI, RichConsoleUI, SimpleConsoleUI
    from .decision_checks import check_decision
    from .decisions import Approve, Decision, DecisionRecord, Edit, Reject, Respond, parse_decision
    from .execution import args_digest, idempotency_key
    from .gate import Gate
    from .grants import Grant, GrantAsk
    from .outcome import Outcome, Reply
    from .pending import Pending, Suspended
    from .policies import AlwaysAsk, AskOnce, AskOncePerTool, NeverAsk, Policy, PolicyMemory
    from .request_steps import RequestStep
    from .requests import Execution, ExecutionStatus, Request, RequestStatus
    from .rules import (
        AgentEntry,
        AppEntry,
        Defaults,
        DescriptionInput,
        Explanation,
        RuleSet,
        RuleSettings,
        ServiceEntry,
        ToolEntry,
        WhenInput,
    )
    from .rules.effective import RequestRule
    from .rules.schedule import Escalation
    from .shadow import ShadowHit, ShadowRules
    from .store import Store, default_db_path, open_store

__version__ = "0.1.0"

_LAZY: dict[str, str] = {
    "AgentEntry": "rules",
    "AlwaysAsk": "policies",
    "AppEntry": "rules",
    "Approve": "decisions",
    "AskOnce": "policies",
    "AskOncePerTool": "policies",
    "AsyncClient": "client",
    "AuditAnchor": "audit",
    "AuditEntry": "audit",
    "AuditReport": "audit",
    "Backend": "backend",
    "BatchFilter": "batch",
    "BatchResult": "batch",
    "Client": "client",
    "ConfirmationUI": "console",
    "Decision": "decisions",
    "DecisionRecord": "decisions",
    "Defaults": "rules",
    "DescriptionInput": "rules",
    "Edit": "decisions",
    "Escalation": "rules.schedule",
    "Execution": "requests",
    "ExecutionStatus": "requests",
    "Explanation": "rules",
    "Gate": "gate",
    "Grant": "grants",
    "GrantAsk": "grants",
    "NeverAsk": "policies",
    "Outcome": "outcome",
    "Pending": "pending",
    "Policy": "policies",
    "PolicyMemory": "policies",
    "Reject": "decisions",
    "Reply": "outcome",
    "Request": "requests",
    "RequestRule": "rules.effective",
    "RequestStatus": "requests",
    "RequestStep": "request_steps",
    "Respond": "decisions",
    "RichConsoleUI": "console",
    "RuleSet": "rules",
    "RuleSettings": "rules",
    "Scope": "calls",
    "ServiceEntry": "rules",
    "ShadowHit": "shadow",
    "ShadowRules": "shadow",
    "SimpleConsoleUI": "console",
    "Store": "store",
    "Suspended": "pending",
    "ToolCall": "calls",
    "ToolEntry": "rules",
    "WhenInput": "rules",
    "batch_decision": "batch",
    "check_batch_ids": "batch",
    "check_decision": "decision_checks",
    "default_db_path": "store",
    "idempotency_key": "execution",
    "args_digest": "execution",
    "open_backend": "backends",
    "open_store": "store",
    "parse_decision": "decisions",
}
"""Each public name loaded on first use, and the module (under signoff) it comes from."""


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "AgentEntry",
    "AlreadyDecided",
    "AlreadyExists",
    "AlwaysAsk",
    "AppEntry",
    "ApprovalRequiredUnattended",
    "Approve",
    "ArgsMismatch",
    "AskOnce",
    "AskOncePerTool",
    "AsyncClient",
    "AuditAnchor",
    "AuditBroken",
    "AuditEntry",
    "AuditReport",
    "AutoResumeExceeded",
    "Backend",
    "BatchFilter",
    "BatchResult",
    "Client",
    "ConfigError",
    "ConfirmationUI",
    "Decision",
    "DecisionNotAllowed",
    "DecisionRecord",
    "Defaults",
    "DescriptionInput",
    "Edit",
    "Escalation",
    "Execution",
    "ExecutionError",
    "ExecutionInDoubt",
    "ExecutionInProgress",
    "ExecutionStatus",
    "Explanation",
    "Gate",
    "Grant",
    "GrantAsk",
    "GrantNotAllowed",
    "IdempotencyKeyReused",
    "InvalidArguments",
    "InvalidDecision",
    "InvalidInput",
    "MigrationError",
    "NeverAsk",
    "NotAnApprover",
    "NotAuthenticated",
    "NotBatchable",
    "Outcome",
    "PayloadTooLarge",
    "Pending",
    "PermissionDenied",
    "Policy",
    "PolicyMemory",
    "Reject",
    "RemoteError",
    "Reply",
    "Request",
    "RequestConflict",
    "RequestError",
    "RequestExpired",
    "RequestNotFound",
    "RequestNotReady",
    "RequestRule",
    "RequestStatus",
    "RequestStep",
    "Respond",
    "ReviewTimeout",
    "RichConsoleUI",
    "RuleSet",
    "RuleSettings",
    "Scope",
    "SeparationOfDuties",
    "ServerUnavailable",
    "ServiceEntry",
    "ShadowHit",
    "ShadowRules",
    "SignoffError",
    "SimpleConsoleUI",
    "Store",
    "StoreError",
    "StoreUnavailable",
    "Suspended",
    "TooManySignIns",
    "ToolCall",
    "ToolEntry",
    "ToolFailed",
    "UnattendedError",
    "WhenInput",
    "__version__",
    "args_digest",
    "batch_decision",
    "check_batch_ids",
    "check_decision",
    "default_db_path",
    "idempotency_key",
    "open_backend",
    "open_store",
    "parse_decision",
]
