"""Plain parameters coerced without pydantic.

Typer (0.2x) coerces each parameter's value through a pydantic `TypeAdapter` that it builds the
first time the parameter is parsed, even when the value is the option's default `None`: loading
pydantic and building a dozen adapters cost a command about 0.07 s of CPU at every start, more
than everything `signoff pending` itself does. Here the plainest values get what Typer would have
returned, without pydantic: a missing value (None), a string for a `str`, a decimal integer for an
`int` within its `min`/`max`, a flag's `True`/`False` for a `bool`, a member (or a member's exact
value) for an `Enum`. Any other value, or a parameter with its own parser or `clamp`, goes
to Typer's own coercion, so what it accepts and its error messages stay Typer's.

With a Typer that coerces otherwise (no `_TyperParameter` with a `_runtime_param`) nothing changes.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Any

import typer.core

_TYPER_PARAMETER: Any = getattr(typer.core, "_TyperParameter", None)
"""Typer's parameter class that builds its coercion on first use (None in a Typer without it)."""

PLAIN_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")
"""An integer written the one way every integer parser reads alike."""


class PlainCoercion:
    """A parameter's coercion (Typer's `RuntimeParam.coerce`) for its plain values; Typer's own
    coercion, built on first need, for the others."""

    def __init__(self, descriptor: Any) -> None:
        self.descriptor = descriptor
        info = descriptor.parameter_info
        plain = getattr(info, "parser", None) is None and not getattr(info, "clamp", False)
        plain = plain and getattr(descriptor, "file_annotation", None) is None
        self.kind: type | None = None
        annotation = descriptor.annotation
        if plain and (annotation in (str, int, bool) or _is_enum(annotation)):
            self.kind = annotation
        self.low: Any = getattr(info, "min", None)
        self.high: Any = getattr(info, "max", None)
        self._typers: Any = None

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        several = param.multiple or param.nargs == -1
        if value is None:
            return () if several else None
        if not several:
            if self.kind is str and type(value) is str:
                return value
            if self.kind is int:
                number = _plain_int(value)
                if number is not None and self._in_range(number):
                    return number
            if self.kind is bool and type(value) is bool:
                return value
            if _is_enum(self.kind):
                member = _member(self.kind, value)
                if member is not None:
                    return member
        return self._typer_coercion().coerce(value, param=param, ctx=ctx)

    def _in_range(self, number: int) -> bool:
        return (self.low is None or number >= self.low) and (self.high is None or number <= self.high)

    def _typer_coercion(self) -> Any:
        if self._typers is None:
            from typer._coercion import build_runtime_param

            self._typers = build_runtime_param(self.descriptor)
        return self._typers


def _is_enum(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, Enum)


def _member(kind: Any, value: Any) -> Any:
    if isinstance(value, kind):
        return value
    for member in kind:
        if type(value) is str and value == member.value:
            return member
    return None


def _plain_int(value: Any) -> int | None:
    if type(value) is int:
        return value
    if type(value) is str and PLAIN_INT.fullmatch(value):
        return int(value)
    return None


def coerce_plainly(command: Any, ctx: Any) -> None:
    """Give `command`'s parameters, its `--help` and those of its sub-commands the plain coercion;
    `ctx` is the context `command` runs in, or its parent's (whose help option names it inherits)."""
    if _TYPER_PARAMETER is None:
        return
    params = list(command.params)
    if not command.context_settings.get("help_option_names"):
        params.append(command.get_help_option(ctx))
    for param in params:
        if isinstance(param, _TYPER_PARAMETER) and vars(param).get("_runtime_param", False) is None:
            vars(param)["_runtime_param"] = PlainCoercion(param.type_descriptor)
    for sub_command in getattr(command, "commands", {}).values():  # a group's
        coerce_plainly(sub_command, ctx)
