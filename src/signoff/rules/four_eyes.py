"""Rules whose four eyes contradict their approvers, refused when they are loaded (DESIGN §14).

A rule that keeps the requester from approving (`separation`) but names nobody else to approve
(`approvers: [requester]`, or no approvers: then the requester alone decides) would leave every
request it asks about to expire; so would a quorum larger than the people named besides the
requester (those an escalation adds count too). Layers combine, so the check resolves each
tool, agent and app the rules name (a glob or list key stands for the tools it names) and
refuses the first combination that says both; the message names the call and the layers that
said so.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from .effective import REQUESTER, RequestRule, Rule
from .keys import KeyIndex, Match, parse_key

if TYPE_CHECKING:
    from .model import AppEntry, RuleSet
    from .resolve import Explanation


def sets_separation(rules: RuleSet) -> bool:
    """Whether any entry says `separation` (otherwise nothing here can contradict)."""
    for entry in (*rules.tools.values(), *rules.services.values()):
        if entry.separation is not None:
            return True
    for agent in rules.agents.values():
        if any(not isinstance(switch, bool) and switch.separation for switch in agent.interrupt_on.values()):
            return True
    for app in rules.apps.values():
        if any(
            not isinstance(switch, bool) and switch.separation for switch in app.interrupt_overrides.values()
        ):
            return True
    return False


def contradiction(rule: Rule) -> str | None:
    """Why `rule`'s separation leaves nobody to approve (None: it does not)."""
    if rule.separation is None:
        return None
    others = [name for name in _deciders(rule) if name != REQUESTER]
    if not others:
        named = (
            "names no approvers (so the requester decides)" if not rule.approvers else "names only requester"
        )
        return (
            f"separation: {rule.separation} keeps the requester from approving, but the rule {named}: "
            "name the people or groups who approve instead"
        )
    if rule.quorum > len(others) and not any(name.startswith("group:") for name in others):
        return (
            f"separation: {rule.separation} leaves {len(others)} approver(s) besides the requester "
            f"({', '.join(others)}), fewer than the quorum of {rule.quorum}"
        )
    return None


def refuse_unapprovable(rule: RequestRule, request: str) -> None:
    """ConfigError when a new request's four eyes keep out everyone its rule names, or leave
    fewer than its quorum (where the rule names people, not groups): nobody could approve it,
    so it is refused when asked rather than left to expire. Rules checked at load cannot get
    here; an agent's own rule, or `requester_and_creator` naming the token's owner, can."""
    if not rule.separated or not rule.approvers:
        return
    eligible = [name for name in _deciders(rule) if name not in rule.separated]
    if any(name.startswith("group:") for name in eligible) or len(eligible) >= rule.quorum:
        return
    kept_out = ", ".join(rule.separated)
    raise ConfigError(
        f"{request}: four eyes (separation: {rule.separation}) keep out {kept_out}, which leaves "
        f"{len(eligible)} of the approvers ({', '.join(rule.approvers)}) to approve it, fewer than "
        f"{rule.quorum}: name other approvers"
    )


def _deciders(rule: Rule | RequestRule) -> list[str]:
    """Who may come to decide: the approvers, and those an escalation adds later."""
    escalated = (name for step in rule.escalate for name in step.to)
    return list(dict.fromkeys((*rule.approvers, *escalated)))


def check_four_eyes(rules: RuleSet) -> None:
    """ConfigError for the first call the rules would ask about under a separation that leaves
    nobody to approve it."""
    if not sets_separation(rules):
        return
    from .resolve import Resolver

    resolver = Resolver(rules)
    for tool, agent, app in _combinations(rules):
        explanation = resolver.static(tool, agent, app)
        if not explanation.ask:
            continue
        why = contradiction(explanation.rule)
        if why is not None:
            raise ConfigError(f"contradictory rules for {_call(explanation)}: {why}")


def _call(explanation: Explanation) -> str:
    where = [f"tool {explanation.tool!r}"]
    if explanation.agent is not None:
        where.append(f"agent {explanation.agent!r}")
    if explanation.app is not None:
        where.append(f"app {explanation.app!r}")
    layers = ", ".join(f"{step.layer} {step.key!r}" for step in explanation.trace if step.key is not None)
    return " ".join(where) + (f" (from {layers})" if layers else "")


def _combinations(rules: RuleSet) -> Iterator[tuple[str, str | None, str | None]]:
    """Each tool the rules name with one agent and one app per distinct word they say of it.

    An agent's part in a tool's answer is what its entry matching the tool says (nothing, off,
    on, or on with which settings) and its `hitl_disabled`; an app's, what its matching override
    says, whether `hitl_required` names the tool, and its `hitl_disabled` (as
    `Resolver.asks_nowhere` reasons, settings included). So the first agent (and app) of each
    word, plus None, stand for all of them: a handful of combinations per tool, not every
    agent with every app."""
    said = _Said()
    agents = [
        (name, entry.hitl_disabled, KeyIndex(entry.interrupt_on)) for name, entry in rules.agents.items()
    ]
    apps = [
        (name, entry.hitl_disabled, KeyIndex(entry.interrupt_overrides), KeyIndex(_required(entry)))
        for name, entry in rules.apps.items()
    ]
    for tool in dict.fromkeys(_tool_names(rules)):
        agent_words: dict[Hashable, str] = {}
        for name, silenced, index in agents:
            agent_words.setdefault((said(name, index.match(tool)), silenced), name)
        app_words: dict[Hashable, str] = {}
        for name, silenced, overrides, required in apps:
            word = (said(name, overrides.match(tool)), required.match(tool) is not None, silenced)
            app_words.setdefault(word, name)
        for agent in (None, *agent_words.values()):
            for app in (None, *app_words.values()):
                yield tool, agent, app


class _Said:
    """What a matching entry says, comparable (its value written out), each entry written once."""

    def __init__(self) -> None:
        self._written: dict[tuple[str, str], str] = {}

    def __call__(self, name: str, match: Match[Any] | None) -> str | None:
        if match is None:
            return None
        found = self._written.get((name, match.key))
        if found is None:
            found = self._written[name, match.key] = repr(match.value)
        return found


def _required(entry: AppEntry) -> list[tuple[str, bool]]:
    return [(key, True) for key in entry.hitl_required]


def _tool_names(rules: RuleSet) -> Iterator[str]:
    """A tool name for each key the rules hold: a name as it is, each name of a list, a glob
    itself (it matches its own text), and each service's tools under its name."""
    keys: list[str] = [*rules.tools]
    for agent in rules.agents.values():
        keys.extend(agent.interrupt_on)
    for app in rules.apps.values():
        keys.extend(app.interrupt_overrides)
        keys.extend(app.hitl_required)
    for key in keys:
        parsed = parse_key(key)
        if isinstance(parsed, tuple):
            yield from parsed
        else:
            yield parsed
    for name, service in rules.services.items():
        yield f"{name}.*"
        for tool in service.tools:
            yield tool if tool.startswith(name + ".") else f"{name}.{tool}"
