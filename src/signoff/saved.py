"""Haystack's envelope for saved objects, `{"type": "<module>.<Class>", "init_parameters": {...}}`,
without Haystack: signoff's policies and console UIs save themselves this way, so they nest in a
serialized Haystack pipeline or agent (whose `from_dict` imports `type` and calls its `from_dict`)
and in any other config."""

from __future__ import annotations

from typing import Any

from .errors import ConfigError


def type_name(cls: type) -> str:
    """The class's path, as Haystack writes and imports it."""
    return f"{cls.__module__}.{cls.__name__}"


def saved(obj: object, **init_parameters: Any) -> dict[str, Any]:
    """`obj` as the envelope: its class path and what its constructor takes."""
    return {"type": type_name(type(obj)), "init_parameters": init_parameters}


def init_parameters(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """The constructor arguments an envelope holds for `cls`; refuses one saved for another class."""
    found = data.get("type") if isinstance(data, dict) else None
    if found != type_name(cls):
        raise ConfigError(f"cannot load {found!r} as {type_name(cls)}")
    parameters = data.get("init_parameters") or {}
    if not isinstance(parameters, dict):
        raise ConfigError(f"init_parameters of {type_name(cls)} must be a mapping")
    return dict(parameters)
