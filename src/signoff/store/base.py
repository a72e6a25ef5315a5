"""`Store`: the one storage contract, implemented by `SQLiteStore` and `PostgresStore`.

Requests (get-or-create by creator + thread_id + tool_call_id, drafts, decisions with quorum,
expiry, cancel), execution records (claim, renew, finish, reset), settings (rule layers, groups,
AskOnce memory), users and their hashed credentials, the rules agents declared in code, the
answers kept for idempotency keys, rules tried in shadow and their hits, the channels admins add,
sign-ins through an OpenID provider, the hash-chained audit log, and retention (purges).
Every state change and its audit entry commit together; waiters are woken after the commit.
"""

from __future__ import annotations

from .acting_ops import ActingOps
from .address_codes import AddressCodeOps
from .audit_ops import AuditOps
from .channel_ops import ChannelOps
from .declared_ops import DeclaredRuleOps
from .execution_ops import ExecutionOps
from .idempotency_ops import IdempotencyOps
from .identity_ops import IdentityOps
from .oidc_ops import OidcOps
from .people_ops import PeopleOps
from .purge_ops import PurgeOps
from .reply_code_ops import ReplyCodeOps
from .report_ops import ReportOps
from .request_ops import RequestOps
from .rule_history_ops import RuleHistoryOps
from .run_state_ops import RunStateOps
from .settings_ops import SettingsOps
from .shadow_ops import ShadowOps
from .webhook_ops import WebhookOps


class Store(
    ActingOps,
    RequestOps,
    ExecutionOps,
    ShadowOps,  # before the settings it builds on
    RuleHistoryOps,  # before the two it builds on
    SettingsOps,
    PurgeOps,  # before the audit ops it builds on
    AuditOps,
    OidcOps,  # before the identity ops it builds on
    IdentityOps,
    PeopleOps,
    IdempotencyOps,
    ReportOps,
    DeclaredRuleOps,
    RunStateOps,
    AddressCodeOps,
    WebhookOps,
    ReplyCodeOps,
    ChannelOps,
):
    """Base class of the store backends. Use `open_store(url)` to get one."""
