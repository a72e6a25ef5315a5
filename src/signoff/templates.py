"""Texts: card descriptions (with redaction) and what the model is told about a decision."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ._util import as_text, display_json
from .visible import visible, visible_json

REDACTED = "***"
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_.\-]*)\}")


def fill(template: str, values: Mapping[str, Any]) -> str:
    """Replace `{name}` for the names given; any other placeholder is left as written.

    Strings are inserted as they are, other values as JSON. Never raises on a template.
    """

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            return match.group(0)
        return as_text(values[name])

    return _PLACEHOLDER.sub(replace, template)


def redact_args(args: Mapping[str, Any], redact: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """A copy of `args` with the named arguments masked (top-level names)."""
    if not redact:
        return dict(args)
    return {key: (REDACTED if key in redact else value) for key, value in args.items()}


def redacted_result(
    result: Any, redact: tuple[str, ...] | list[str], args: Mapping[str, Any], *, indent: int | None = None
) -> str:
    """A tool's result as a person may be shown it: values under the rule's `redact` names
    masked wherever they sit in it, the redacted arguments' own values (from `args`) masked where
    the result repeats them, hidden characters escaped (line breaks kept)."""
    shown = _masked(result, frozenset(redact))
    text = shown if isinstance(shown, str) else visible_json(shown, indent=indent)
    for name in redact:
        secret = args.get(name)
        if isinstance(secret, str) and len(secret) >= MIN_SECRET:
            text = text.replace(secret, REDACTED)
    return visible(text, newlines=True)


MIN_SECRET = 4
"""A redacted argument's value shorter than this is not looked for in the result (masking
every "a" would garble it and hide nothing)."""


def _masked(value: Any, names: frozenset[str]) -> Any:
    if not names:
        return value
    if isinstance(value, dict):
        return {key: REDACTED if key in names else _masked(item, names) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_masked(item, names) for item in value]
    return value


def render_description(
    template: str,
    *,
    tool_name: str,
    args: Mapping[str, Any],
    redact: tuple[str, ...] | list[str] = (),
    prefix: str = "",
) -> str:
    """The card text: `{tool_name}`, `{tool_args}` (JSON), `{<arg>}`, `{prefix}`; redacted args
    masked, and characters a person cannot see in the args written as escapes (a line break in an
    argument must not fake a line of the card)."""
    shown = redact_args(args, redact)
    values: dict[str, Any] = {key: visible(as_text(value)) for key, value in shown.items()}
    values.update(tool_name=visible(tool_name), tool_args=description_args(shown), prefix=prefix)
    return fill(template, values)


def description_args(shown: Mapping[str, Any]) -> str:
    """`{tool_args}` as descriptions show it: the (redacted) args as one line of JSON."""
    return visible_json(dict(shown))


def card_head(description: str, *, tool_name: str, shown_args: Mapping[str, Any]) -> str:
    """A rendered card without the default template's tail ("Tool: ...", "Args: ..."), which a
    prompt that lists the tool and its arguments would show twice: the prefix, or the whole card
    when its rule wrote its own template."""
    tail = f"\n\nTool: {visible(tool_name)}\nArgs: {description_args(shown_args)}"
    return description.removesuffix(tail)


def rejection_text(template: str, feedback_template: str, *, tool_name: str, feedback: str | None) -> str:
    text = fill(template, {"tool_name": tool_name})
    if feedback:
        text += " " + fill(feedback_template, {"feedback": feedback})
    return text


def modification_text(
    template: str,
    feedback_template: str,
    *,
    tool_name: str,
    final_args: Mapping[str, Any],
    feedback: str | None,
) -> str:
    text = fill(template, {"tool_name": tool_name, "final_tool_params": display_json(dict(final_args))})
    if feedback:
        text += " " + fill(feedback_template, {"feedback": feedback})
    return text
