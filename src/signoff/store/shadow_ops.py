"""Rules tried in shadow, in the store (see `signoff.shadow`): added, listed, their hits recorded
and read, promoted (the shadow's rules become the rules in force) or dropped.

Adding, promoting or dropping a shadow bumps the shadows' version (`SHADOWS_COUNTER`), so gates
following the store see the change at their next refresh; only promoting bumps the rules' version
too, being the one that changes what is asked (an edit pending `if_version` against the rules is
not refused because a shadow came or went). Promoting is refused
(RulesChanged) once the rules in force differ from those the shadow was added against: it would
undo that later change unseen. Each is audited: `rules.shadow_added`, `rules.promoted` (with the
layers before and after, like `rules.imported`), `rules.shadow_dropped`. The shadows' and the
replay's modules load when a shadow is first read or written, not with every store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from .._util import canonical_json, utcnow
from ..errors import Conflict, InvalidInput, NotFound, RulesChanged
from ..rules.history import whole_change_data
from .core import Json, Tx
from .settings_ops import (
    RULES_COUNTER,
    SHADOWS_COUNTER,
    SettingsOps,
    _check_kind,
    _layer_name,
    _rules_in,
)

if TYPE_CHECKING:
    from ..rules.kinds import LayerKind
    from ..rules.model import RuleSet
    from ..rules.replay import RecordedCall, ReplayReport
    from ..rules.shadow_marks import MarkedRules
    from ..shadow import RuleHits, ShadowHit, ShadowRules

HITS_PAGE = 50
LABEL_LIMIT = 200
MAX_REPLAY_DAYS = 366


class ShadowOps(SettingsOps):
    def add_shadow_rules(
        self,
        rules: RuleSet,
        *,
        label: str,
        actor: str,
        channel: str = "cli",
        if_version: int | None = None,
    ) -> ShadowRules:
        """Try `rules` in shadow beside the rules in force. InvalidInput if they hold code
        (callables cannot be stored) or the label is empty or too long; with `if_version`,
        RulesChanged (nothing added) unless the rules in force are still at that version."""
        rules.refuse_callables()
        with self._transaction() as (tx, _):
            shadow_id = self._insert_shadow(tx, lambda base: rules, label, actor, channel, if_version)
        return self.get_shadow_rules(shadow_id)

    def add_shadow_entry(
        self,
        kind: LayerKind,
        name: str,
        data: dict[str, Any],
        *,
        label: str,
        actor: str,
        channel: str = "api",
        if_version: int | None = None,
    ) -> ShadowRules:
        """Try one entry in shadow (`mode: shadow` on an entry set through the API): the shadow is
        the rules in force with that entry set to `data`; nothing in force changes. With
        `if_version`, RulesChanged (and nothing added) unless the rules are still at that version."""
        from ..rules.model import RuleSet, validate_entry

        _check_kind(kind)
        name = _layer_name(kind, name)
        canonical = validate_entry(kind, data, name)

        def with_entry(base: RuleSet) -> RuleSet:
            rows = [(k, n, d) for k, n, d in base.layers() if (k, n) != (kind, name)]
            return RuleSet.from_layers([*rows, (kind, name, canonical)])

        with self._transaction() as (tx, _):
            shadow_id = self._insert_shadow(tx, with_entry, label, actor, channel, if_version)
        return self.get_shadow_rules(shadow_id)

    def import_with_shadow(
        self,
        marks: MarkedRules,
        *,
        label: str,
        actor: str,
        channel: str = "cli",
        if_version: int | None = None,
    ) -> tuple[int, ShadowRules]:
        """Apply a rules file's unmarked entries (each marked one keeps what the rules in force
        hold) and try the file as written in shadow, in one transaction: both or neither. The
        rules' new version and the shadow. RulesChanged (nothing changed) as `replace_rules`."""
        from ..rules.model import RuleSet

        shadow_rules = RuleSet.from_dict(marks.shadow)
        shadow_rules.refuse_callables()
        with self._transaction() as (tx, _):
            version = self._next_rules_version(tx, if_version)
            before = _rules_in(tx)
            live = marks.live_over(before)
            tx.run("delete_all_layers")
            for kind, name, data in live.layers():
                tx.run("upsert_layer", kind=kind, name=name, data=Json(data), now=utcnow())
            change = whole_change_data(before, live, version)
            self._audit(tx, "rules.imported", actor=actor, channel=channel, data=change)
            shadow_id = self._insert_shadow(tx, lambda base: shadow_rules, label, actor, channel, None)
        return version, self.get_shadow_rules(shadow_id)

    def _insert_shadow(
        self,
        tx: Tx,
        build: Callable[[RuleSet], RuleSet],
        label: str,
        actor: str,
        channel: str,
        if_version: int | None,
    ) -> int:
        """Add the shadow `build` makes of the rules in force (read here, in `tx`, so its base is
        exactly what it was built on); bumps the shadows' version, not the rules'."""
        from ..shadow import SHADOW_ADDED

        label = label.strip()
        if not label or len(label) > LABEL_LIMIT:
            raise InvalidInput(f"a shadow needs a label of 1 to {LABEL_LIMIT} characters")
        tx.run("bump_counter", name=SHADOWS_COUNTER)  # its row lock: shadows are added in turn
        row = tx.one("get_counter", name=RULES_COUNTER)
        version = int(row["value"]) if row else 0  # the rules in force: unchanged by a shadow
        if if_version is not None and version != if_version:
            raise RulesChanged(
                f"the rules changed since version {if_version} (they are at version {version} now): "
                "nothing was tried in shadow; look at them again"
            )
        base = _rules_in(tx)
        rules = build(base)
        data = {"rules": rules.to_dict(), "base": base.to_dict()}
        row = tx.one("insert_shadow_rules", label=label, data=Json(data), actor=actor, now=utcnow())
        assert row is not None
        shadow_id = int(row["id"])
        self._audit(
            tx,
            SHADOW_ADDED,
            actor=actor,
            channel=channel,
            data={"shadow": shadow_id, "label": label, **whole_change_data(base, rules, version)},
        )
        return shadow_id

    def shadow_rules(self, *, everything: bool = False) -> list[ShadowRules]:
        """The active shadows (with `everything`, the promoted and dropped ones too), newest first."""
        with self._read() as tx:
            rows = tx.all("list_shadow_rules", everything=everything)
        return [_shadow(row) for row in rows]

    def shadows_with_rules(self) -> list[ShadowRules]:
        """The active shadows (what a gate reads after the rules)."""
        return self.shadow_rules()

    def get_shadow_rules(self, shadow_id: int) -> ShadowRules:
        with self._read() as tx:
            row = tx.one("get_shadow_rules", id=shadow_id)
        if row is None:
            raise NotFound(f"no shadow rules numbered {shadow_id} (see `signoff rules shadow --all`)")
        return _shadow(row)

    def record_shadow_hits(self, hits: Iterable[ShadowHit]) -> int:
        """Store hits (of shadows still active; others are ignored); how many were stored."""
        stored = 0
        with self._transaction() as (tx, _):
            for hit in hits:
                stored += tx.run(
                    "insert_shadow_hit",
                    shadow_id=hit.shadow_id,
                    direction=hit.direction,
                    tool=hit.tool,
                    agent=hit.agent,
                    app=hit.app,
                    requester=hit.requester,
                    args=Json(hit.args),
                    rule=Json(hit.rule),
                    now=hit.at,
                )
        return stored

    def shadow_hits(self, shadow_id: int, *, before: int = 0, limit: int = HITS_PAGE) -> list[ShadowHit]:
        """A shadow's hits, newest first, before hit `before` (0: from the newest)."""
        with self._read() as tx:
            rows = tx.all("list_shadow_hits", shadow_id=shadow_id, before=before, limit=limit)
        return [_hit(row) for row in rows]

    def shadow_hits_by_rule(self, shadow_id: int) -> list[RuleHits]:
        """A shadow's hits counted per direction and per deciding rule of the shadow, most first."""
        from ..shadow import RuleHits

        with self._read() as tx:
            rows = tx.all("shadow_hits_by_rule", shadow_id=shadow_id)
        return [
            RuleHits(
                direction=row["direction"], layer=row["layer"], key=row["rule_key"], hits=int(row["hits"])
            )
            for row in rows
        ]

    def recent_shadow_hits(self, since: datetime, *, batch: int = 1000) -> Iterable[ShadowHit]:
        """Every hit recorded since `since`, oldest first (read in batches)."""
        after = 0
        while True:
            with self._read() as tx:
                rows = tx.all("recent_shadow_hits", since=since, after=after, limit=batch)
            yield from (_hit(row) for row in rows)
            if len(rows) < batch:
                return
            after = int(rows[-1]["id"])

    def recent_tool_calls(self, since: datetime, *, batch: int = 1000) -> Iterable[dict[str, Any]]:
        """The tool calls asked about since `since` (tool_name, agent, app, requester, args,
        created_at), oldest first, read in batches."""
        after_at, after = since, ""
        while True:
            with self._read() as tx:
                rows = tx.all(
                    "recent_tool_requests", since=since, after_at=after_at, after=after, limit=batch
                )
            yield from rows
            if len(rows) < batch:
                return
            after_at, after = rows[-1]["created_at"], str(rows[-1]["id"])

    def replay_rules(self, proposed: RuleSet, *, days: float = 7.0) -> ReplayReport:
        """The calls recorded in the last `days` days replayed through `proposed` and through the
        rules in force (see `signoff.rules.replay`); nothing is stored."""
        if not 0 < days <= MAX_REPLAY_DAYS:
            raise InvalidInput(f"replay between 0 and {MAX_REPLAY_DAYS} days back, not {days}")
        since = utcnow() - timedelta(days=days)
        from ..rules.replay import replay
        from ..rules.resolve import Resolver  # with the rules' models (pydantic), for a replay

        in_force = Resolver(self.load_rules())
        return replay(self._recorded_calls(since), in_force, Resolver(proposed), since=since)

    def _recorded_calls(self, since: datetime) -> Iterator[RecordedCall]:
        from ..rules.replay import RecordedCall, recorded_call

        for row in self.recent_tool_calls(since):
            yield recorded_call(row)
        seen: set[tuple[str, str | None, str | None, str | None, str, datetime]] = set()
        for hit in self.recent_shadow_hits(since):
            if hit.direction != "newly_asked":
                continue  # it was asked about: its request is replayed
            key = (hit.tool, hit.agent, hit.app, hit.requester, canonical_json(hit.args), hit.at)
            if key in seen:
                continue  # the same call, seen by another shadow
            seen.add(key)
            yield RecordedCall(
                tool=hit.tool,
                agent=hit.agent,
                app=hit.app,
                requester=hit.requester,
                args=hit.args,
                at=hit.at,
                source="shadow_hit",
            )

    def promote_shadow_rules(self, shadow_id: int, *, actor: str, channel: str = "cli") -> int:
        """Make the shadow's rules the rules in force; returns the new version. Conflict if it is
        no longer active; RulesChanged if the rules in force changed since it was added."""
        from ..shadow import PROMOTED

        with self._transaction() as (tx, _):
            version = self._next_rules_version(tx, None)
            tx.run("bump_counter", name=SHADOWS_COUNTER)
            shadow = _active(tx, shadow_id)
            before = _rules_in(tx)
            if _entries(before) != _entries(shadow.base):
                raise RulesChanged(
                    f"the rules in force changed since shadow {shadow_id} was added: nothing was "
                    "promoted. Drop it and try the change again against the rules in force"
                )
            tx.run("delete_all_layers")
            for kind, name, data in shadow.rules.layers():
                tx.run("upsert_layer", kind=kind, name=name, data=Json(data), now=utcnow())
            tx.run("close_shadow_rules", id=shadow_id, status="promoted", actor=actor, now=utcnow())
            data = {
                "shadow": shadow_id,
                "label": shadow.label,
                **whole_change_data(before, shadow.rules, version),
            }
            self._audit(tx, PROMOTED, actor=actor, channel=channel, data=data)
        return version

    def drop_shadow_rules(self, shadow_id: int, *, actor: str, channel: str = "cli") -> ShadowRules:
        """Stop trying the shadow (its hits are kept until purged). Conflict if it is no longer active."""
        from ..shadow import SHADOW_DROPPED

        with self._transaction() as (tx, _):
            tx.run("bump_counter", name=SHADOWS_COUNTER)
            shadow = _active(tx, shadow_id)
            tx.run("close_shadow_rules", id=shadow_id, status="dropped", actor=actor, now=utcnow())
            data = {"shadow": shadow_id, "label": shadow.label, "hits": shadow.hits}
            self._audit(tx, SHADOW_DROPPED, actor=actor, channel=channel, data=data)
        return self.get_shadow_rules(shadow_id)


def _active(tx: Tx, shadow_id: int) -> ShadowRules:
    row = tx.one("get_shadow_rules", id=shadow_id)
    if row is None:
        raise NotFound(f"no shadow rules numbered {shadow_id} (see `signoff rules shadow --all`)")
    shadow = _shadow(row)
    if shadow.status != "active":
        raise Conflict(f"shadow {shadow_id} was {shadow.status} already")
    return shadow


def _entries(rules: RuleSet) -> dict[tuple[str, str], dict[str, Any]]:
    return {(kind, name): data for kind, name, data in rules.layers()}


def _shadow(row: dict[str, Any]) -> ShadowRules:
    from ..rules.model import RuleSet
    from ..shadow import ShadowRules

    data = row["data"]
    return ShadowRules(
        id=int(row["id"]),
        label=str(row["label"]),
        rules=RuleSet.from_dict(data["rules"]),
        base=RuleSet.from_dict(data["base"]),
        status=row["status"],
        created_by=str(row["created_by"]),
        created_at=row["created_at"],
        closed_by=row["closed_by"],
        updated_at=row["updated_at"],
        newly_asked=int(row["newly_asked"]),
        no_longer_asked=int(row["no_longer_asked"]),
    )


def _hit(row: dict[str, Any]) -> ShadowHit:
    from ..shadow import ShadowHit

    return ShadowHit(
        id=int(row["id"]),
        shadow_id=int(row["shadow_id"]),
        direction=row["direction"],
        tool=str(row["tool"]),
        agent=row["agent"],
        app=row["app"],
        requester=row["requester"],
        args=dict(row["args"]),
        rule=dict(row["rule"]),
        at=row["created_at"],
    )
