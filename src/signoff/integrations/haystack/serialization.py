"""signoff's Haystack classes on Haystack's deserialization allowlist.

Haystack 3.4 loads a serialized pipeline or agent (`Pipeline.loads`, `Agent.from_dict`) only
from trusted modules: its own, `haystack_integrations.*`, and the modules a user adds
(`allowed_modules=`, `allow_deserialization_module`, `HAYSTACK_DESERIALIZATION_ALLOWLIST`).
Importing this package adds `signoff.integrations.haystack` (its hooks, strategy and UI, and
nothing else of signoff's), trusted as an installed integration is. Haystack checks a class's
module before importing it, so a process that only loads a pipeline imports this package first:

    import signoff.integrations.haystack  # noqa: F401 - lets Pipeline.loads build signoff's hooks
"""

from __future__ import annotations

from haystack.core.serialization import allow_deserialization_module

TRUSTED = "signoff.integrations.haystack"
"""The module pattern added (a prefix: this package and its submodules)."""


def trust_signoff_classes() -> None:
    """Add `TRUSTED` to Haystack's process-wide deserialization allowlist (once)."""
    allow_deserialization_module(TRUSTED)


__all__ = ["TRUSTED", "trust_signoff_classes"]
