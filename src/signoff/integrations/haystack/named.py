"""Which tools a strategy is named for in a `ConfirmationHook`'s strategies map (DESIGN §4).

`{"send_email": SignoffConfirmationStrategy()}` names `send_email` as gated: it asks unless a rule
in force explicitly turns it off, as Haystack's own `BlockingConfirmationStrategy(AlwaysAskPolicy(),
…)` would always ask; under `"*"` the rules alone decide. signoff's hooks tell their strategies
the names when they are built (`declare_named`). Under Haystack's stock `ConfirmationHook`, which
shows a strategy only the tool's name, a strategy finds the map in the hook's frame the first time
it sees a tool (`reached_by_name`), and remembers the answer.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import FrameType
from typing import Any

StrategyKey = str | tuple[str, ...]
WILDCARD = "*"
MAP_NAME = "confirmation_strategies"
"""The name Haystack's hook functions give the map (`_run_confirmation_strategies[_async]`)."""
FRAMES_UP = 4


def named_for(strategies: Mapping[StrategyKey, Any], strategy: object) -> Iterator[str]:
    """The tools `strategies` names for `strategy` (by a name or in a tuple key; not `"*"`)."""
    for key, value in strategies.items():
        if value is strategy and key != WILDCARD:
            yield from key if isinstance(key, tuple) else (key,)


def declare_named(strategies: Mapping[StrategyKey, Any]) -> None:
    """Tell each signoff strategy in the map the tools it is named for."""
    for strategy in {id(value): value for value in strategies.values()}.values():
        if callable(name_tools := getattr(strategy, "name_tools", None)):
            name_tools(named_for(strategies, strategy))


def reached_by_name(tool_name: str, frame: FrameType | None, strategy: object) -> bool:
    """Whether the hook calling `strategy` for `tool_name` (its frame is `frame` or a few above)
    found it by the tool's name rather than by `"*"`; False when no hook's map is in sight (the
    strategy called directly: the rules decide)."""
    for _ in range(FRAMES_UP):
        if frame is None:
            return False
        strategies = frame.f_locals.get(MAP_NAME)
        if isinstance(strategies, Mapping) and any(value is strategy for value in strategies.values()):
            return tool_name in set(named_for(strategies, strategy))
        frame = frame.f_back
    return False
