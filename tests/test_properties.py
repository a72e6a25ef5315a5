"""Properties (Hypothesis) of the parts every request goes through: rule resolution, description
templates, decision parsing, duration parsing. Each runs a bounded number of examples (a few
seconds in CI) and keeps no example database.
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from signoff import InvalidDecision, RuleSet, parse_decision
from signoff._util import parse_duration
from signoff.decisions import DECISION_TYPES, Approve, Edit, Reject, Respond, decision_to_dict
from signoff.rules import Resolver
from signoff.rules.model import DEFAULT_DESCRIPTION
from signoff.templates import (
    REDACTED,
    fill,
    modification_text,
    redact_args,
    rejection_text,
    render_description,
)

PROPERTY = settings(
    max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)

# -- rule resolution ----------------------------------------------------------------------------

TOOLS = ("send_email", "delete_db", "ls")
AGENT, APP = "support", "acme"
DESCRIPTIONS = ("tool says {to}", "agent says", "app says")
CONDITIONS = (None, "true", "false", "args.n > 1")


def settings_of(description: str) -> st.SearchStrategy[dict[str, Any]]:
    """A rule mapping: maybe a description, maybe a condition, maybe approvers."""
    return st.fixed_dictionaries(
        {},
        optional={
            "description": st.just(description),
            "when": st.sampled_from(CONDITIONS[1:]),
            "approvers": st.lists(st.sampled_from(("alice", "bob", "group:ops")), min_size=1, unique=True),
        },
    )


def switch_of(description: str) -> st.SearchStrategy[Any]:
    """What an agent's interrupt_on or an app's interrupt_overrides says of a tool."""
    return st.one_of(st.booleans(), settings_of(description))


def keyed(values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Entries keyed by exact tool names or `*`."""
    return st.dictionaries(st.sampled_from((*TOOLS, "*")), values, max_size=3)


tool_layers = keyed(
    st.builds(
        lambda on, fields: {"requires_approval": on, **fields}, st.booleans(), settings_of(DESCRIPTIONS[0])
    )
)
agent_entries = st.fixed_dictionaries(
    {"hitl_disabled": st.booleans(), "interrupt_on": keyed(switch_of(DESCRIPTIONS[1]))}
)
app_entries = st.fixed_dictionaries(
    {
        "hitl_disabled": st.booleans(),
        "interrupt_overrides": keyed(switch_of(DESCRIPTIONS[2])),
        "hitl_required": st.lists(st.sampled_from(TOOLS), max_size=2, unique=True),
    }
)


def entry_for(entries: dict[str, Any], tool: str) -> Any:
    """The entry of one layer that names `tool`: its exact key, else `*`, else None."""
    return entries.get(tool, entries.get("*"))


def expected(
    tools: dict[str, Any], agent: dict[str, Any] | None, app: dict[str, Any] | None, tool: str, n: int
) -> tuple[bool, str, dict[str, Any]]:
    """The rule model of DESIGN §4, written out: (ask, deciding layer, merged settings)."""
    on, layer, merged = False, "default", {}
    tool_entry = entry_for(tools, tool)
    if tool_entry is not None:
        on, layer = tool_entry["requires_approval"], "tool"
        merged.update({key: value for key, value in tool_entry.items() if key != "requires_approval"})
    for name, entry in (
        ("agent", agent and agent["interrupt_on"]),
        ("app", app and app["interrupt_overrides"]),
    ):
        switch = entry_for(entry or {}, tool)
        if switch is None:
            continue
        on, layer = switch is not False, name
        if isinstance(switch, dict):
            merged.update(switch)
    if app is not None and tool in app["hitl_required"]:
        return True, "app.hitl_required", merged
    if agent is not None and agent["hitl_disabled"]:
        return False, "agent.hitl_disabled", merged
    if app is not None and app["hitl_disabled"]:
        return False, "app.hitl_disabled", merged
    when = merged.get("when")
    if on and when is not None and not {"true": True, "false": False, "args.n > 1": n > 1}[when]:
        return False, "when", merged
    return on, layer, merged


@PROPERTY
@given(
    tools=tool_layers,
    agent=st.none() | agent_entries,
    app=st.none() | app_entries,
    tool=st.sampled_from(TOOLS),
    n=st.integers(0, 3),
)
def test_rule_resolution_app_beats_agent_beats_tool_and_silence_wins_unless_required(
    tools: dict[str, Any], agent: dict[str, Any] | None, app: dict[str, Any] | None, tool: str, n: int
) -> None:
    rules = RuleSet.from_dict(
        {
            "tools": tools,
            "agents": {AGENT: agent} if agent is not None else {},
            "apps": {APP: app} if app is not None else {},
        }
    )
    found = Resolver(rules).explain(tool, AGENT, APP, {"n": n})
    ask, layer, merged = expected(tools, agent, app, tool, n)
    assert (found.ask, found.layer) == (ask, layer)
    assert found.rule.required == (layer == "app.hitl_required")
    assert found.rule.description == merged.get("description", DEFAULT_DESCRIPTION)
    assert list(found.rule.approvers) == merged.get("approvers", [])


@PROPERTY
@given(tools=tool_layers, app=app_entries, tool=st.sampled_from(TOOLS), n=st.integers(0, 3))
def test_a_silenced_agent_never_asks_unless_the_app_requires_it(
    tools: dict[str, Any], app: dict[str, Any], tool: str, n: int
) -> None:
    rules = RuleSet.from_dict(
        {"tools": tools, "agents": {AGENT: {"hitl_disabled": True}}, "apps": {APP: app}}
    )
    found = Resolver(rules).explain(tool, AGENT, APP, {"n": n})
    assert found.ask is (tool in app["hitl_required"])


# -- description templates ----------------------------------------------------------------------

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
ARG_NAMES = st.sampled_from(("to", "card", "a.b", "x-y", "0", "tool_name", "tool_args", "prefix")) | st.text(
    max_size=6
)
args_objects = st.dictionaries(ARG_NAMES, json_values, max_size=5)
templates = st.one_of(
    st.text(max_size=60),
    st.lists(
        st.sampled_from(
            (
                "{",
                "}",
                "{{",
                "}}",
                "{to}",
                "{card}",
                "{tool_args}",
                "{tool_name}",
                "{prefix}",
                "{0}",
                "{a.b}",
                "{to:>10}",
                "{to!r}",
                "{missing}",
                "{ to }",
                "{}",
                "%s",
                "\\",
                "text ",
                "\n",
            )
        ),
        max_size=12,
    ).map("".join),
)


@PROPERTY
@given(
    template=templates, args=args_objects, tool=st.text(max_size=20), redact=st.lists(ARG_NAMES, max_size=3)
)
def test_description_templates_never_raise(
    template: str, args: dict[str, Any], tool: str, redact: list[str]
) -> None:
    shown = render_description(template, tool_name=tool, args=args, redact=redact, prefix="Needs approval")
    assert isinstance(shown, str)
    assert isinstance(fill(template, args), str)
    assert isinstance(rejection_text(template, template, tool_name=tool, feedback=template), str)
    assert isinstance(
        modification_text(template, template, tool_name=tool, final_args=args, feedback=template or None), str
    )


@PROPERTY
@given(template=st.text(alphabet=st.characters(blacklist_characters="{}"), max_size=60), args=args_objects)
def test_a_template_without_placeholders_is_the_text_itself(template: str, args: dict[str, Any]) -> None:
    assert render_description(template, tool_name="t", args=args) == template


@PROPERTY
@given(name=st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True), args=args_objects)
def test_an_unknown_placeholder_is_left_as_written(name: str, args: dict[str, Any]) -> None:
    args.pop(name, None)
    if name in ("tool_name", "tool_args", "prefix"):
        return
    assert render_description(f"<{{{name}}}>", tool_name="t", args=args) == f"<{{{name}}}>"


SECRET = "s3cr3t-VALUE-0451"


@PROPERTY
@given(template=templates, args=args_objects)
def test_a_redacted_argument_never_shows_in_the_description(template: str, args: dict[str, Any]) -> None:
    shown = render_description(
        template + "{card}{tool_args}", tool_name="t", args={**args, "card": SECRET}, redact=["card"]
    )
    assert SECRET not in shown
    assert REDACTED in shown
    assert redact_args({**args, "card": SECRET}, ["card"])["card"] == REDACTED


# -- decision parsing ---------------------------------------------------------------------------

DECISION_KEYS = st.sampled_from(
    ("type", "args", "comment", "message", "value", "edited_action", "name", "extra")
)
decision_like = st.one_of(
    st.fixed_dictionaries(
        {"type": st.sampled_from((*DECISION_TYPES, "maybe", "", "APPROVE")) | json_scalars},
        optional={
            "args": args_objects | json_values,
            "comment": st.text(max_size=10) | json_scalars,
            "message": st.text(max_size=10) | json_scalars,
            "value": json_values,
            "edited_action": st.fixed_dictionaries(
                {},
                optional={
                    "name": st.sampled_from(("send_email", "other")) | json_scalars,
                    "args": json_values,
                },
            )
            | json_values,
        },
    ),
    st.dictionaries(DECISION_KEYS | st.text(max_size=6), json_values, max_size=5),
    json_values,
)


@PROPERTY
@given(data=decision_like, tool=st.none() | st.just("send_email"))
def test_decision_parsing_gives_a_decision_or_invalid_decision(data: Any, tool: str | None) -> None:
    refusal = None
    try:
        decision = parse_decision(data, tool_name=tool)
    except InvalidDecision as exc:
        refusal = exc.message
    if refusal is not None:
        assert refusal.strip(), "a refusal says what is wrong"
        return
    assert decision.type in DECISION_TYPES
    assert parse_decision(decision_to_dict(decision)) == decision


texts = st.none() | st.text(max_size=20)
decisions = st.one_of(
    st.builds(Approve, comment=texts),
    st.builds(Edit, args=args_objects, comment=texts),
    st.builds(Reject, message=texts),
    st.builds(Respond, message=st.text(min_size=1, max_size=20), value=st.none() | json_values),
    st.builds(Respond, message=texts, value=json_values.filter(lambda value: value is not None)),
)


@PROPERTY
@given(decision=decisions)
def test_a_decision_survives_its_json_form(decision: Any) -> None:
    assert parse_decision(decision_to_dict(decision)) == decision


@PROPERTY
@given(args=args_objects, name=st.sampled_from(("send_email", "other")))
def test_langchains_edited_action_is_an_edit_of_the_same_tool_only(args: dict[str, Any], name: str) -> None:
    payload = {"type": "edit", "edited_action": {"name": name, "args": args}}
    if name == "send_email":
        assert parse_decision(payload, tool_name="send_email") == Edit(args=args)
    else:
        with pytest.raises(InvalidDecision, match="cannot change the tool"):
            parse_decision(payload, tool_name="send_email")


# -- duration parsing ---------------------------------------------------------------------------

UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "": 1}
duration_texts = st.one_of(
    st.text(max_size=12),
    st.from_regex(r"\s*-?\d{1,22}(\.\d{1,6})?\s*(ms|s|m|h|d|w|y|)?\s*", fullmatch=True),
    st.sampled_from(("inf", "nan", "1e400", "1e3s", "", " ", "0", "0s", "-5m", "1_000s", "٣s")),
)
durations = st.one_of(duration_texts, st.integers(), st.floats(allow_nan=True, allow_infinity=True))


@PROPERTY
@given(value=durations)
@example(float("inf"))
@example("99999999999d")
@example(10**30)
def test_a_duration_parses_to_a_positive_timedelta_or_raises_value_error(value: str | float) -> None:
    try:
        parsed = parse_duration(value)
    except ValueError:
        return
    assert isinstance(parsed, timedelta)
    assert parsed > timedelta(0)


@PROPERTY
@given(
    amount=st.integers(1, 50_000) | st.floats(0.001, 50_000, allow_nan=False).map(lambda x: round(x, 3)),
    unit=st.sampled_from(tuple(UNITS)),
    space=st.sampled_from(("", " ")),
)
def test_a_well_formed_duration_says_its_number_of_seconds(amount: float, unit: str, space: str) -> None:
    seconds = float(amount) * UNITS[unit]
    if seconds <= 0 or (isinstance(amount, float) and "e" in str(amount)):
        return
    parsed = parse_duration(f" {amount}{space}{unit} ")
    assert math.isclose(parsed.total_seconds(), seconds, rel_tol=1e-9, abs_tol=1e-6)
