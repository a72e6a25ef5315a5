"""When to ask: the rule layers, their resolution and its explanation."""

from .callables import DescriptionInput, WhenInput
from .effective import RequestRule, Rule
from .keys import KeyIndex, parse_key
from .model import (
    AgentEntry,
    AppEntry,
    Defaults,
    RuleSet,
    RuleSettings,
    ServiceEntry,
    ToolEntry,
    validate_entry,
)
from .resolve import Explanation, Resolver, TraceStep

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
