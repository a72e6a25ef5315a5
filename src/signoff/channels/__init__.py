"""Channels: where people see requests and answer them besides the web inbox (DESIGN §9).

`Channel` is the contract every channel implements (send a notice, update it to the final
state, follow it up, verify what comes back); `Notice` and `FollowUp` are what they render;
`ChannelRegistry` holds the configured channels by name. Sending goes through the store's
outbox (`signoff.outbox`), never straight from a request's transaction.
"""

from __future__ import annotations

from .contract import (
    BadCallback,
    BadSignature,
    Channel,
    DeliveryError,
    Inbound,
    InboundOutcome,
    MessageRef,
)
from .notice import FinalState, FollowUp, Notice, build_follow_up, build_notice, final_state
from .registry import INBOX, ChannelConfig, ChannelRegistry, Secret, parse_config
from .texts import Locale

__all__ = [
    "INBOX",
    "BadCallback",
    "BadSignature",
    "Channel",
    "ChannelConfig",
    "ChannelRegistry",
    "DeliveryError",
    "FinalState",
    "FollowUp",
    "Inbound",
    "InboundOutcome",
    "Locale",
    "MessageRef",
    "Notice",
    "Secret",
    "build_follow_up",
    "build_notice",
    "final_state",
    "parse_config",
]
