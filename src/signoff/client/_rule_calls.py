"""The REST calls of rules, their layers and the shadows tried beside them: see `_calls`."""

from __future__ import annotations

from typing import Any

from ..rules.callables import refuse_callables_in
from ..rules.model import LayerKind, RuleSet
from ..shadow import ShadowHit, ShadowRules
from ._calls import _path, _query
from ._wire import (
    Call,
)


def rules() -> Call[tuple[int, RuleSet]]:
    return Call(
        "GET",
        _path("rules"),
        lambda answer: (int(answer.data["version"]), RuleSet.from_dict(answer.data["rules"])),
    )


def rules_and_shadows() -> Call[tuple[int, RuleSet, list[ShadowRules], int]]:
    """`rules`, with the rules tried in shadow beside them and their version (a server without
    them: none, version 0; such a server bumps the rules' version for a shadow instead)."""
    return Call(
        "GET",
        _path("rules"),
        lambda answer: (
            int(answer.data["version"]),
            RuleSet.from_dict(answer.data["rules"]),
            [ShadowRules.from_dict(item) for item in answer.data.get("shadows") or []],
            int(answer.data.get("shadows_version") or 0),
        ),
    )


def record_shadow_hits(hits: list[ShadowHit]) -> Call[int]:
    return Call(
        "POST",
        _path("rules", "shadow", "hits"),
        lambda answer: int(answer.data["recorded"]),
        body={"hits": [hit.to_dict() for hit in hits]},
    )


def replace_rules(ruleset: RuleSet, if_version: int | None = None) -> Call[int]:
    return Call(
        "PUT",
        _path("rules"),
        lambda answer: int(answer.data["version"]),
        body=ruleset.to_dict(),
        params=_query(if_version=if_version),
    )


def _layer_name(name: str) -> str:
    return name or "-"


def get_layer(kind: LayerKind, name: str) -> Call[dict[str, Any] | None]:
    return Call(
        "GET", _path("rules", kind, _layer_name(name)), lambda answer: answer.data, absent_if_404=True
    )


def set_layer(kind: LayerKind, name: str, data: dict[str, Any]) -> Call[dict[str, Any]]:
    refuse_callables_in(data, f"{kind}s.{name}" if kind != "defaults" else "defaults")
    return Call("PUT", _path("rules", kind, _layer_name(name)), lambda answer: answer.data, body=data)


def delete_layer(kind: LayerKind, name: str) -> Call[bool]:
    return Call(
        "DELETE", _path("rules", kind, _layer_name(name)), lambda answer: bool(answer.data["deleted"])
    )
