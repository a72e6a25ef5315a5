"""When to ask: the rule layers, their resolution and its explanation.

The names below are loaded when first used (see `signoff._lazy`): a request's effective rule
(`rules.effective`) does not load the rule files' pydantic models or YAML."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .callables import DescriptionInput, WhenInput
    from .effective import RequestRule, Rule
    from .explanation import Explanation, TraceStep
    from .keys import KeyIndex, parse_key
    from .model import (
        AgentEntry,
        AppEntry,
        Defaults,
        RuleSet,
        ServiceEntry,
        ToolEntry,
        validate_entry,
    )
    from .resolve import Resolver
    from .settings import RuleSettings

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "AgentEntry": "model",
        "AppEntry": "model",
        "Defaults": "model",
        "DescriptionInput": "callables",
        "Explanation": "explanation",
        "KeyIndex": "keys",
        "RequestRule": "effective",
        "Resolver": "resolve",
        "Rule": "effective",
        "RuleSet": "model",
        "RuleSettings": "settings",
        "ServiceEntry": "model",
        "ToolEntry": "model",
        "TraceStep": "explanation",
        "WhenInput": "callables",
        "parse_key": "keys",
        "validate_entry": "model",
    },
)

__all__ = [
    "AgentEntry",
    "AppEntry",
    "Defaults",
    "DescriptionInput",
    "Explanation",
    "KeyIndex",
    "RequestRule",
    "Resolver",
    "Rule",
    "RuleSet",
    "RuleSettings",
    "ServiceEntry",
    "ToolEntry",
    "TraceStep",
    "WhenInput",
    "parse_key",
    "validate_entry",
]
