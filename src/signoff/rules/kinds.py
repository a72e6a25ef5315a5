"""The kinds of rule layer, apart from the rule files' models so that reading the rules' history
does not load pydantic."""

from __future__ import annotations

from typing import Literal, TypeAlias

LayerKind: TypeAlias = Literal["defaults", "tool", "service", "agent", "app"]
LAYER_KINDS: tuple[LayerKind, ...] = ("defaults", "tool", "service", "agent", "app")
