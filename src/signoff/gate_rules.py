"""The rules a gate follows: a `RuleSet` given in code or read from a file, or else the layers kept
in its store, re-read within `refresh` seconds of a change (so switching HITL off takes effect at
once); beneath them, the tools and services its component declared in code (`rules.declared`),
which the rules' own entries override field by field. Each component has its own (`component`).

Beside the rules kept in the store, the rules tried in shadow there (`signoff.shadow`), read with
them: `shadow_check` records, in the background, each call a shadow would answer differently."""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._util import utcnow
from .backend import Backend
from .errors import ServerUnavailable, StoreUnavailable
from .fresh_answers import Answers, call_at
from .rules.declared import Declarations
from .rules.effective import RuleOrigin
from .rules.explanation import Explanation
from .rules.model import RuleSet, ServiceEntry, ToolEntry
from .rules.resolve import Resolver
from .shadow import ShadowResolver, ShadowRules, Shadows
from .shadow_recording import ShadowRecorder
from .waiting import patience

log = logging.getLogger("signoff")


class GateRules:
    def __init__(
        self,
        store: Backend,
        rules: RuleSet | str | Path | None,
        *,
        refresh: float,
        path: str | None = None,
        declared: Declarations | None = None,
        recorder: ShadowRecorder | None = None,
    ) -> None:
        self.store = store
        self.recorder = recorder if recorder is not None else ShadowRecorder(store)
        self._shadows_now = Shadows()
        self.refresh = refresh
        self._fixed_rules = RuleSet.from_file(rules) if isinstance(rules, str | Path) else rules
        self._rules_path = str(rules) if isinstance(rules, str | Path) else path
        self._declared = declared if declared is not None else Declarations()
        self._code_keys: frozenset[str] = frozenset()
        """The declared tools and services the current rules do not name (their origin is `code`)."""
        self._components: weakref.WeakSet[GateRules] = weakref.WeakSet()
        self._resolver_now: Resolver | None = None
        self._rules_version = (-1, -1)
        """The rules' and the shadows' version read last."""
        self._next_refresh = 0.0
        self._resolver_lock = threading.Lock()
        self.answers = Answers(self._asks_nowhere_now, timeless=self._fixed_rules is not None)
        """`asks_nowhere`'s answers while they hold (see `signoff.fresh_answers`): its
        `__getitem__` is `Gate.asks_nowhere`, one C-level lookup per call."""

    def component(self, declared: Declarations) -> GateRules:
        """The same rules in force (no file read again); beneath them `declared`, and beneath
        that this gate's own declarations (which it keeps up with)."""
        declared.beneath = self._declared
        child = GateRules(
            self.store,
            self._fixed_rules,
            refresh=self.refresh,
            path=self._rules_path,
            declared=declared,
            recorder=self.recorder,
        )
        with self._resolver_lock:
            self._components.add(child)
        return child

    def register_tool(self, name: str, entry: ToolEntry) -> None:
        """Declare a tool's own default (the tool layer) in code; the rules' entry for it wins
        field by field."""
        with self._resolver_lock:
            self._declared.tools[name] = entry
            self._forget_resolver()

    def declaration(self, name: str) -> ToolEntry | None:
        return self._declared.tools.get(name)

    def register_service(self, name: str, entry: ServiceEntry) -> None:
        """Declare a service (the tools named `name.<tool>`) in code; the rules' entry for it wins
        field by field."""
        with self._resolver_lock:
            self._declared.services[name] = entry
            self._forget_resolver()

    def _forget_resolver(self) -> None:
        self._resolver_now = None
        self._next_refresh = 0.0
        self.answers.forget(keep_after=self.answers.timeless)
        for child in list(self._components):  # their declarations lie over these
            with child._resolver_lock:
                child._forget_resolver()

    def current(self) -> Resolver | None:
        """The resolver in force if it needs no refresh (no I/O to answer), else None."""
        resolver = self._resolver_now
        if resolver is not None and (self._fixed_rules is not None or time.monotonic() < self._next_refresh):
            return resolver
        return None

    def may_ask(self, tool: str, agent: str | None, app: str | None) -> bool:
        """`resolver().static(tool, agent, app).ask`, with no more calls than that needs: the
        check every call through an adapter pays."""
        resolver = self._resolver_now
        if resolver is None or (self._fixed_rules is None and time.monotonic() >= self._next_refresh):
            resolver = self.resolver()
        if resolver.static(tool, agent, app).ask:
            return True
        shadows = self._shadows_now
        return bool(shadows) and any(
            shadow.resolver.static(tool, agent, app).ask for shadow in shadows.resolvers
        )

    def asks_nowhere(self, tool: str) -> bool:
        """`resolver().asks_nowhere(tool)`: no call of `tool` is asked about under the rules in
        force, for any agent, app, args or requester. The first check an adapter's call pays:
        `answers[tool]` (what `Gate.asks_nowhere` is, without this method's own call)."""
        return self.answers[tool]

    def _asks_nowhere_now(self, tool: str) -> bool:
        """An answer `answers` is missing: the resolver in force (refreshed if due) gives it, and
        it is kept while it holds (until the rules change or their refresh falls due)."""
        return self.asks_nowhere_under(self.resolver(), tool)

    def asks_nowhere_under(self, resolver: Resolver, tool: str) -> bool:
        """`resolver.asks_nowhere(tool)`, kept in `answers` if `resolver` is still the one in force
        (no I/O: the gate's fast path fills `answers` this way for its next call of `tool`)."""
        found = resolver.nowhere.get(tool)
        if found is None:
            found = resolver.asks_nowhere(tool)
        shadows = self._shadows_now
        if found and shadows and not shadows.ask_nowhere(tool):
            found = False  # a shadow may ask: the call is checked, to record its hit
        self.answers.keep(tool, found, still=lambda: resolver is self._resolver_now)
        return found

    def resolver(self) -> Resolver:
        resolver = self._resolver_now
        if resolver is not None and (self._fixed_rules is not None or time.monotonic() < self._next_refresh):
            return resolver
        with self._resolver_lock:
            if self._fixed_rules is not None:
                if self._resolver_now is None:
                    self._resolver_now = self._resolver_for(self._fixed_rules)
                return self._resolver_now
            self._next_refresh = time.monotonic() + self.refresh
            if self._resolver_now is None:
                version = self.store.rules_and_shadows_version()
            else:
                try:  # one attempt: while the server is away, the rules read last stand
                    with patience(utcnow()):
                        version = self.store.rules_and_shadows_version()
                except (ServerUnavailable, StoreUnavailable):
                    version = self._rules_version
            if self._resolver_now is None or version != self._rules_version:
                rules = self.store.load_rules()
                self._shadows_now = self._shadows_for(self.store.shadows_with_rules())
                self._resolver_now = self._resolver_for(rules)
                self._rules_version = version
            self._keep_answers_until(self._next_refresh)
            return self._resolver_now

    def _keep_answers_until(self, deadline: float) -> None:
        """A refresh: `asks_nowhere`'s answers start over, kept until the next refresh is due."""
        keeping = self.refresh > 0
        token = self.answers.forget(keep_after=keeping)
        if keeping and not call_at(deadline, self.answers, token):
            self.answers.forget()  # nothing would forget them in time: answer every call afresh

    def _resolver_for(self, rules: RuleSet) -> Resolver:
        applied = self._declared.apply(rules)
        self._code_keys = applied.code_keys
        return Resolver(applied.rules, as_given=applied.as_given)

    def _shadows_for(self, shadows: list[ShadowRules]) -> Shadows:
        """The shadows' resolvers, this component's declarations beneath; one that cannot be
        built is left out (logged): a shadow never stops the gate."""
        resolvers = []
        for shadow in shadows:
            try:
                applied = self._declared.apply(shadow.rules)
                resolver = Resolver(applied.rules, as_given=applied.as_given)
            except Exception:
                log.warning("signoff: shadow %d cannot be resolved; it is skipped", shadow.id, exc_info=True)
                continue
            resolvers.append(ShadowResolver(shadow.id, resolver))
        return Shadows(resolvers)

    def shadow_check(
        self,
        live: Explanation,
        *,
        args: Mapping[str, Any] | None,
        requester: str | None,
        annotations: Mapping[str, Any] | None,
    ) -> None:
        """Record (in the background) the hits of a call the rules in force answered with `live`."""
        shadows = self._shadows_now
        if not shadows:
            return
        hits = shadows.hits(live, args=args, requester=requester, annotations=annotations, at=utcnow())
        if hits:
            self.recorder.record(hits)

    def origin(self, explanation: Explanation) -> RuleOrigin:
        """Where the rule a call is asked under came from (shown with the request)."""
        key = explanation.deciding_key
        if explanation.layer in ("tool", "service") and key in self._code_keys:
            return RuleOrigin(source="code", layer=explanation.layer, key=key)
        if self._fixed_rules is None:
            return RuleOrigin(source="store", layer=explanation.layer, key=key)
        if self._rules_path is not None:
            return RuleOrigin(source="file", layer=explanation.layer, key=key, path=self._rules_path)
        return RuleOrigin(source="code", layer=explanation.layer, key=key)
