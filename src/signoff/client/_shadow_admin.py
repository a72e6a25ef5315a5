"""What `Client` offers an administrator for rules tried in shadow (`/v1/rules/shadow`): the same
methods, with the same names, as the store's (`signoff.store.shadow_ops`), so the CLI works on
either. The actor is always the token's user."""

from __future__ import annotations

from typing import Any, TypeVar

from ..rules.model import RuleSet
from ..rules.replay import ReplayReport
from ..rules.shadow_marks import MarkedRules
from ..shadow import RuleHits, ShadowHit, ShadowRules
from ._calls import _path, _query
from ._wire import Call

T = TypeVar("T")


class ShadowAdminCalls:
    """Mixed into `Client`, which sends the calls."""

    def _send(self, call: Call[T]) -> T:
        raise NotImplementedError

    def shadow_rules(self, *, everything: bool = False) -> list[ShadowRules]:
        return self._send(
            Call(
                "GET",
                _path("rules", "shadow"),
                lambda answer: [ShadowRules.from_dict(item) for item in answer.data],
                params=_query(all=everything),
            )
        )

    def get_shadow_rules(self, shadow_id: int) -> ShadowRules:
        return self._send(_show(shadow_id, before=0, limit=1))[0]

    def shadow_hits(self, shadow_id: int, *, before: int = 0, limit: int = 50) -> list[ShadowHit]:
        return self._send(_show(shadow_id, before=before, limit=limit))[1]

    def shadow_hits_by_rule(self, shadow_id: int) -> list[RuleHits]:
        return self._send(
            Call(
                "GET",
                _path("rules", "shadow", str(shadow_id)),
                lambda answer: [RuleHits.from_dict(item) for item in answer.data["by_rule"]],
                params=_query(limit=1),
            )
        )

    def add_shadow_rules(
        self, rules: RuleSet, *, label: str, actor: str = "", channel: str = "api"
    ) -> ShadowRules:
        body = {"label": label, "rules": rules.to_dict()}
        return self._send(
            Call(
                "POST", _path("rules", "shadow"), lambda answer: ShadowRules.from_dict(answer.data), body=body
            )
        )

    def import_with_shadow(
        self,
        marks: MarkedRules,
        *,
        label: str,
        actor: str = "",
        channel: str = "api",
        if_version: int | None = None,
    ) -> tuple[int, ShadowRules]:
        """`PUT /v1/rules` with entries marked `mode: shadow`: the unmarked applied, the whole
        tried in shadow, in one transaction on the server."""
        return self._send(
            Call(
                "PUT",
                _path("rules"),
                lambda answer: (int(answer.data["version"]), ShadowRules.from_dict(answer.data["shadow"])),
                body=marks.as_written(),
                params=_query(if_version=if_version, label=label),
            )
        )

    def promote_shadow_rules(self, shadow_id: int, *, actor: str = "", channel: str = "api") -> int:
        return self._send(
            Call(
                "POST",
                _path("rules", "shadow", str(shadow_id), "promote"),
                lambda answer: int(answer.data["version"]),
            )
        )

    def drop_shadow_rules(self, shadow_id: int, *, actor: str = "", channel: str = "api") -> ShadowRules:
        return self._send(
            Call(
                "POST",
                _path("rules", "shadow", str(shadow_id), "drop"),
                lambda answer: ShadowRules.from_dict(answer.data),
            )
        )

    def replay_rules(self, proposed: RuleSet, *, days: float = 7.0) -> ReplayReport:
        body: dict[str, Any] = {"rules": proposed.to_dict(), "days": days}
        return self._send(
            Call(
                "POST",
                _path("rules", "shadow", "preview"),
                lambda answer: ReplayReport.from_dict(answer.data),
                body=body,
            )
        )


def _show(shadow_id: int, *, before: int, limit: int) -> Call[tuple[ShadowRules, list[ShadowHit]]]:
    return Call(
        "GET",
        _path("rules", "shadow", str(shadow_id)),
        lambda answer: (
            ShadowRules.from_dict(answer.data),
            [ShadowHit.from_dict(item) for item in answer.data["hits"]],
        ),
        params=_query(before=before, limit=limit),
    )
