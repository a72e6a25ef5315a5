"""Rules tried in shadow (DESIGN §14): a proposed rule set the gate resolves beside the rules in
force without following it. A call the shadow answers differently is a hit: `newly_asked` (the
rules in force let it run, and it ran; the shadow would have asked) or `no_longer_asked` (it was
asked, as the rules in force say; the shadow would have let it run). An admin then promotes the
shadow (it becomes the rules in force) or drops it.

I/O-free: what a shadow is, what a hit is, and which calls hit. The store keeps them
(`signoff.store.shadow_ops`); the gate records hits in the background (`signoff.shadow_recording`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .rules.explanation import Explanation
    from .rules.model import RuleSet
    from .rules.resolve import Resolver

ShadowStatus = Literal["active", "promoted", "dropped"]
HitDirection = Literal["newly_asked", "no_longer_asked"]
SHADOW_ADDED = "rules.shadow_added"
SHADOW_DROPPED = "rules.shadow_dropped"
PROMOTED = "rules.promoted"


@dataclass(frozen=True, kw_only=True)
class ShadowRules:
    """A proposed rule set tried in shadow, with its hits counted."""

    id: int
    label: str
    rules: RuleSet
    base: RuleSet
    """The rules in force when it was added: promoting it is refused once they have changed."""
    status: ShadowStatus
    created_by: str
    created_at: datetime
    closed_by: str | None = None
    updated_at: datetime | None = None
    newly_asked: int = 0
    no_longer_asked: int = 0

    @property
    def hits(self) -> int:
        return self.newly_asked + self.no_longer_asked

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "label": self.label,
            "rules": self.rules.to_dict(),
            "base": self.base.to_dict(),
            "status": self.status,
            "created_by": self.created_by,
            "created_at": self.created_at.isoformat(),
            "closed_by": self.closed_by,
            "updated_at": self.updated_at.isoformat() if self.updated_at is not None else None,
            "newly_asked": self.newly_asked,
            "no_longer_asked": self.no_longer_asked,
        }

    def for_gates(self) -> dict[str, Any]:
        """What a gate reads (with the rules, at each refresh): no base, no counts."""
        return {
            "id": self.id,
            "label": self.label,
            "rules": self.rules.to_dict(),
            "status": self.status,
            "created_by": self.created_by,
            "created_at": self.created_at.isoformat(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ShadowRules:
        from .rules.model import RuleSet  # pydantic's: not for every module that names a shadow

        updated = data.get("updated_at")
        return cls(
            id=int(data["id"]),
            label=str(data["label"]),
            rules=RuleSet.from_dict(data["rules"]),
            base=RuleSet.from_dict(data.get("base") or {}),
            status=data["status"],
            created_by=str(data["created_by"]),
            created_at=datetime.fromisoformat(data["created_at"]),
            closed_by=data.get("closed_by"),
            updated_at=datetime.fromisoformat(updated) if updated else None,
            newly_asked=int(data.get("newly_asked", 0)),
            no_longer_asked=int(data.get("no_longer_asked", 0)),
        )


@dataclass(frozen=True, kw_only=True)
class ShadowHit:
    """One call a shadow would have answered differently. `rule`: the shadow's deciding layer and
    key (`layer`, `key`) beside those of the rules in force (`live_layer`, `live_key`)."""

    shadow_id: int
    direction: HitDirection
    tool: str
    agent: str | None
    app: str | None
    requester: str | None
    args: dict[str, Any]
    rule: dict[str, Any]
    at: datetime
    id: int | None = None
    """Set once stored."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "shadow_id": self.shadow_id,
            "direction": self.direction,
            "tool": self.tool,
            "agent": self.agent,
            "app": self.app,
            "requester": self.requester,
            "args": self.args,
            "rule": self.rule,
            "at": self.at.isoformat(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ShadowHit:
        direction = data["direction"]
        if direction not in ("newly_asked", "no_longer_asked"):
            raise ValueError(f"a shadow hit's direction is newly_asked or no_longer_asked, not {direction!r}")
        return cls(
            id=data.get("id"),
            shadow_id=int(data["shadow_id"]),
            direction=direction,
            tool=str(data["tool"]),
            agent=data.get("agent"),
            app=data.get("app"),
            requester=data.get("requester"),
            args=dict(data.get("args") or {}),
            rule=dict(data.get("rule") or {}),
            at=datetime.fromisoformat(data["at"]),
        )


@dataclass(frozen=True, kw_only=True)
class RuleHits:
    """A shadow's hits in one direction whose deciding rule in the shadow was `layer` `key`."""

    direction: HitDirection
    layer: str | None
    key: str | None
    hits: int

    @property
    def rule(self) -> str:
        return f"{self.layer or '?'} {self.key}" if self.key else self.layer or "?"

    def to_dict(self) -> dict[str, Any]:
        return {"direction": self.direction, "layer": self.layer, "key": self.key, "hits": self.hits}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RuleHits:
        return cls(
            direction=data["direction"], layer=data.get("layer"), key=data.get("key"), hits=int(data["hits"])
        )


@dataclass(frozen=True)
class ShadowResolver:
    """An active shadow and the resolver of its rules (the gate's declarations applied)."""

    shadow_id: int
    resolver: Resolver


@dataclass
class Shadows:
    """The active shadows a gate resolves beside its rules."""

    resolvers: Sequence[ShadowResolver] = ()
    _nowhere: dict[str, bool] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.resolvers)

    def ask_nowhere(self, tool: str) -> bool:
        """No shadow asks about any call of `tool`: the gate's fast path may skip them."""
        found = self._nowhere.get(tool)
        if found is None:
            found = all(shadow.resolver.asks_nowhere(tool) for shadow in self.resolvers)
            self._nowhere[tool] = found
        return found

    def hits(
        self,
        live: Explanation,
        *,
        args: Mapping[str, Any] | None,
        requester: str | None,
        annotations: Mapping[str, Any] | None,
        at: datetime,
    ) -> list[ShadowHit]:
        """The hits of one call the rules in force answered with `live`."""
        found = []
        for shadow in self.resolvers:
            try:
                proposed = shadow.resolver.explain(
                    live.tool, live.agent, live.app, dict(args or {}), requester, annotations
                )
            except Exception:
                continue
            if proposed.ask == live.ask:
                continue
            found.append(
                ShadowHit(
                    shadow_id=shadow.shadow_id,
                    direction="newly_asked" if proposed.ask else "no_longer_asked",
                    tool=live.tool,
                    agent=live.agent,
                    app=live.app,
                    requester=requester,
                    args=dict(args or {}),
                    rule={
                        "layer": proposed.layer,
                        "key": proposed.deciding_key,
                        "live_layer": live.layer,
                        "live_key": live.deciding_key,
                    },
                    at=at,
                )
            )
        return found
