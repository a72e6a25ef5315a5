"""Channels: where people see requests and answer them besides the web inbox (DESIGN §9).

`Channel` is the contract every channel implements (send a notice, update it to the final
state, follow it up, verify what comes back); `Notice` and `FollowUp` are what they render;
`ChannelRegistry` holds the configured channels by name. Sending goes through the store's
outbox (`signoff.outbox`), never straight from a request's transaction.

The names below are loaded when first used (see `signoff._lazy`), so that the store's modules
that need one of them do not load the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
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

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "INBOX": "registry",
        "BadCallback": "contract",
        "BadSignature": "contract",
        "Channel": "contract",
        "ChannelConfig": "registry",
        "ChannelRegistry": "registry",
        "DeliveryError": "contract",
        "FinalState": "notice",
        "FollowUp": "notice",
        "Inbound": "contract",
        "InboundOutcome": "contract",
        "Locale": "texts",
        "MessageRef": "contract",
        "Notice": "notice",
        "Secret": "registry",
        "build_follow_up": "notice",
        "build_notice": "notice",
        "final_state": "notice",
        "parse_config": "registry",
    },
)

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
