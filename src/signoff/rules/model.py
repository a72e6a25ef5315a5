"""The three rule layers (tool/service, agent, app) and their defaults, as written and kept.

A `RuleSet` is what a YAML file holds and what the store keeps, one row per layer entry:

    defaults: {deadline: 24h, on_expire: reject, unattended: approve}
    tools:    {delete_db: {requires_approval: true, allowed_decisions: [approve, reject]}}
    services: {github: {approval_mode: whitelist, tools: [merge_pr]}}
    agents:   {support: {hitl_disabled: false, interrupt_on: {send_email: true, ls: false}}}
    apps:     {acme-prod: {interrupt_overrides: {delete_db: {allowed_decisions: [approve]}},
                           hitl_required: [transfer_money]}}
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TypeAlias

import pydantic
from pydantic import AfterValidator, BaseModel, BeforeValidator, Field, field_validator, model_validator

from ..errors import ConfigError
from .callables import refuse_callables
from .effective import (
    DEFAULT_DEADLINE,
    DEFAULT_DESCRIPTION,
    DEFAULT_DESCRIPTION_PREFIX,
    DEFAULT_EXPIRE_MESSAGE,
    DEFAULT_FEEDBACK_TEMPLATE,
    DEFAULT_MODIFY_TEMPLATE,
    DEFAULT_REJECT_TEMPLATE,
    Authority,
    OnExpire,
    OriginSource,
    RequestRule,
    Rule,
    RuleOrigin,
    Separation,
    SeparationSetting,
    UnattendedMode,
)
from .keys import format_key, parse_key
from .kinds import LAYER_KINDS, LayerKind
from .settings import Duration, RuleSettings, StrictModel

__all__ = [  # with, re-exported, what moved to `effective` (the server, tests and bench import it from here)
    "DEFAULT_DEADLINE",
    "DEFAULT_DESCRIPTION",
    "DEFAULT_DESCRIPTION_PREFIX",
    "DEFAULT_EXPIRE_MESSAGE",
    "DEFAULT_FEEDBACK_TEMPLATE",
    "DEFAULT_MAX_AUTO_RESUME",
    "DEFAULT_MODIFY_TEMPLATE",
    "DEFAULT_REJECT_TEMPLATE",
    "ENV_MAX_AUTO_RESUME",
    "LAYER_KINDS",
    "AgentEntry",
    "AppEntry",
    "ApprovalMode",
    "Authority",
    "Defaults",
    "LayerKind",
    "OnExpire",
    "OriginSource",
    "RequestRule",
    "Rule",
    "RuleOrigin",
    "RuleSet",
    "Separation",
    "SeparationSetting",
    "ServiceEntry",
    "ToolEntry",
    "ToolSwitch",
    "ToolSwitches",
    "UnattendedMode",
    "entry_model",
    "validate_entry",
]

DEFAULT_MAX_AUTO_RESUME = 10
ENV_MAX_AUTO_RESUME = "SIGNOFF_UNATTENDED_MAX_AUTO_RESUME"

ApprovalMode: TypeAlias = Literal["all", "whitelist", "blacklist", "unless_read_only"]


class ToolEntry(RuleSettings):
    """Layer 1: the tool's own default. `requires_approval` marks it dangerous for everyone."""

    requires_approval: bool = False


class ServiceEntry(RuleSettings):
    """Layer 1 for a group of tools named `SERVICE.<tool>` (one MCP server, say).

    `all`: every tool asks; `whitelist`: only the listed tools ask; `blacklist`: all but the listed
    ones ask; `unless_read_only`: every tool asks unless the call's tool annotations mark it
    read-only (`readOnlyHint: true`, as an MCP server says of its tools), and the listed tools ask
    even then (annotations are the tool's own claim). A tool added to the service later is
    reviewed under `all`, `blacklist` and `unless_read_only`, not under `whitelist` (seed 004's
    table, which this follows over its prose).
    """

    requires_approval: bool = True
    approval_mode: ApprovalMode = "all"
    tools: list[str] = Field(default_factory=list)


ToolSwitch: TypeAlias = bool | RuleSettings


def _encode_tuple_keys(value: Any) -> Any:
    """Python callers may key a mapping by a tuple of tool names (Haystack's form); keep it as
    the JSON-array string that YAML, JSON and the store use (`keys.format_key`)."""
    if isinstance(value, Mapping):
        return {format_key(key) if isinstance(key, tuple) else key: item for key, item in value.items()}
    return value


def _check_keys(value: dict[str, ToolSwitch]) -> dict[str, ToolSwitch]:
    for key in value:
        if not key.strip():
            raise ValueError("a tool key cannot be empty")
        parse_key(key)
    return value


ToolSwitches: TypeAlias = Annotated[
    dict[str, ToolSwitch], BeforeValidator(_encode_tuple_keys), AfterValidator(_check_keys)
]
"""Tool keys (checked; tuples of names kept as their JSON-array string) → each one's switch."""


class AgentEntry(StrictModel):
    """Layer 2: one agent (orchestrator). `hitl_disabled` silences it whatever the app says;
    `description_prefix` heads its cards instead of the defaults' (each LangChain agent has its own)."""

    hitl_disabled: bool = False
    description_prefix: str | None = None
    interrupt_on: ToolSwitches = Field(default_factory=dict)


class AppEntry(StrictModel):
    """Layer 3: one deployment (tenant). Its overrides win; `hitl_required` cannot be silenced."""

    hitl_disabled: bool = False
    interrupt_overrides: ToolSwitches = Field(default_factory=dict)
    hitl_required: list[str] = Field(default_factory=list)
    grants_for_required: bool = False
    """Standing grants may cover the `hitl_required` tools too (where their rule has `max_grant`)."""


class Defaults(StrictModel):
    """What a rule leaves unsaid: its description, deadline and what happens when nobody decides."""

    description_prefix: str = DEFAULT_DESCRIPTION_PREFIX
    description: str = DEFAULT_DESCRIPTION
    deadline: Duration = DEFAULT_DEADLINE
    on_expire: OnExpire = "reject"
    expire_message: str = DEFAULT_EXPIRE_MESSAGE
    reject_template: str = DEFAULT_REJECT_TEMPLATE
    modify_template: str = DEFAULT_MODIFY_TEMPLATE
    feedback_template: str = DEFAULT_FEEDBACK_TEMPLATE
    unattended: UnattendedMode = "approve"
    max_auto_resume: int | None = Field(default=None, ge=0)
    """None: the env var SIGNOFF_UNATTENDED_MAX_AUTO_RESUME, else 10."""

    def auto_resume_limit(self) -> int:
        """How many unattended auto-decisions one run may make."""
        if self.max_auto_resume is not None:
            return self.max_auto_resume
        env = os.environ.get(ENV_MAX_AUTO_RESUME, "").strip()
        return int(env) if env.isdigit() else DEFAULT_MAX_AUTO_RESUME


class RuleSet(StrictModel):
    """All three layers and the defaults. Immutable; build a new one to change it."""

    defaults: Defaults = Field(default_factory=Defaults)
    tools: dict[str, ToolEntry] = Field(default_factory=dict)
    services: dict[str, ServiceEntry] = Field(default_factory=dict)
    agents: dict[str, AgentEntry] = Field(default_factory=dict)
    apps: dict[str, AppEntry] = Field(default_factory=dict)

    @field_validator("tools", mode="before")
    @classmethod
    def _tuple_keys(cls, value: Any) -> Any:
        return _encode_tuple_keys(value)

    @model_validator(mode="after")
    def _four_eyes_leave_an_approver(self) -> RuleSet:
        from .four_eyes import check_four_eyes  # it resolves calls: `resolve` imports this module

        try:
            check_four_eyes(self)
        except ConfigError as exc:
            raise ValueError(exc.message) from None
        return self

    @classmethod
    def from_dict(cls, data: Any) -> RuleSet:
        if data is None:
            return cls()
        try:
            return cls.model_validate(data)
        except pydantic.ValidationError as exc:
            raise ConfigError(f"invalid rules: {_describe(exc)}") from None

    @classmethod
    def from_yaml(cls, text: str) -> RuleSet:
        import yaml  # for rule files: rules read from the store are JSON

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError(f"rules are not valid YAML: {exc}") from None
        return cls.from_dict(data)

    @classmethod
    def from_file(cls, path: str | Path) -> RuleSet:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read rules file {path}: {exc.strerror}") from None
        return cls.from_yaml(text)

    def to_dict(self) -> dict[str, Any]:
        self.refuse_callables()
        # exclude_unset, not exclude_defaults: a value written explicitly can matter even when it
        # equals the default (a tool entry's `requires_approval: false` overrides its service).
        return self.model_dump(mode="json", exclude_unset=True)

    def to_yaml(self) -> str:
        import yaml

        return yaml.safe_dump(self.to_dict(), sort_keys=False, allow_unicode=True)

    def layers(self) -> list[tuple[LayerKind, str, dict[str, Any]]]:
        """One (kind, name, data) row per entry: how the store keeps a rule set."""
        self.refuse_callables()
        rows: list[tuple[LayerKind, str, dict[str, Any]]] = []
        defaults = self.defaults.model_dump(mode="json", exclude_unset=True)
        if defaults:
            rows.append(("defaults", "", defaults))
        groups: tuple[tuple[LayerKind, Mapping[str, BaseModel]], ...] = (
            ("tool", self.tools),
            ("service", self.services),
            ("agent", self.agents),
            ("app", self.apps),
        )
        for kind, entries in groups:
            for name, entry in entries.items():
                rows.append((kind, name, entry.model_dump(mode="json", exclude_unset=True)))
        return rows

    def refuse_callables(self) -> None:
        """ConfigError naming the first entry whose `when` or `description` is a Python callable:
        such rules live only in code."""
        groups: tuple[tuple[LayerKind, Mapping[str, BaseModel]], ...] = (
            ("tool", self.tools),
            ("service", self.services),
            ("agent", self.agents),
            ("app", self.apps),
        )
        for kind, entries in groups:
            for name, entry in entries.items():
                _refuse_entry_callables(kind, name, entry)

    @classmethod
    def from_layers(cls, rows: list[tuple[str, str, dict[str, Any]]]) -> RuleSet:
        data: dict[str, Any] = {"tools": {}, "services": {}, "agents": {}, "apps": {}}
        for kind, name, entry in rows:
            if kind == "defaults":
                data["defaults"] = entry
            else:
                data[f"{kind}s"][name] = entry
        return cls.from_dict(data)


def entry_model(kind: LayerKind) -> type[BaseModel]:
    models: dict[str, type[BaseModel]] = {
        "defaults": Defaults,
        "tool": ToolEntry,
        "service": ServiceEntry,
        "agent": AgentEntry,
        "app": AppEntry,
    }
    return models[kind]


def validate_entry(kind: LayerKind, data: dict[str, Any], name: str = "") -> dict[str, Any]:
    """Check one layer entry (to be stored: no callables) and return its canonical JSON form."""
    try:
        model = entry_model(kind).model_validate(data)
    except pydantic.ValidationError as exc:
        raise ConfigError(f"invalid {kind} settings: {_describe(exc)}") from None
    _refuse_entry_callables(kind, name, model)
    return model.model_dump(mode="json", exclude_unset=True)


def _refuse_entry_callables(kind: LayerKind, name: str, entry: BaseModel) -> None:
    where = f"{kind}s.{name}" if kind != "defaults" else "defaults"
    refuse_callables(entry, where)
    switches: Mapping[str, ToolSwitch] = {}
    if isinstance(entry, AgentEntry):
        where, switches = f"{where}.interrupt_on", entry.interrupt_on
    elif isinstance(entry, AppEntry):
        where, switches = f"{where}.interrupt_overrides", entry.interrupt_overrides
    for key, switch in switches.items():
        refuse_callables(switch, f"{where}.{key}")


def _describe(exc: pydantic.ValidationError) -> str:
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "rules"
        got = f" (got {error['input']!r})" if error["type"] == "literal_error" else ""
        problems.append(f"{where}: {error['msg']}{got}")
    return "; ".join(problems)
