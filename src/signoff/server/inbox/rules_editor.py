"""The rules editor's form: each layer as YAML text, a sample call to explain, and what the
preview compared (the version of the rules in force and a digest of the proposed rules), read
into a `RuleSet` with the same checks as `signoff config import`."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from ..._util import canonical_json
from ...errors import InvalidInput
from ...rules.model import RuleSet
from ...rules.preview import SampleCall
from ..limits import read_json

LAYER_TEXTS = (
    ("defaults", "Defaults", "deadline, on_expire, unattended, description_prefix, …"),
    ("tools", "Tools", "Per tool: requires_approval, allowed_decisions, approvers, deadline, when, …"),
    ("services", "Services", "Per service (SERVICE.tool): approval_mode, tools, and a tool's settings."),
    ("agents", "Agents", "Per agent: hitl_disabled, interrupt_on: {tool: true | false | settings}."),
    ("apps", "Apps", "Per app: hitl_disabled, interrupt_overrides, hitl_required."),
)
"""Each text area: its key in a rules file, its label, what goes in it."""
FIELDSETS = (
    ("Defaults", ("defaults",)),
    ("Layer 1: tools and services", ("tools", "services")),
    ("Layer 2: agents", ("agents",)),
    ("Layer 3: apps", ("apps",)),
)
LABELS = {key: label for key, label, _ in LAYER_TEXTS}
SAMPLE_FIELDS = ("tool", "agent", "app", "requester", "args")


def digest(rules: RuleSet) -> str:
    """What a preview showed, to check that Apply applies exactly that."""
    return hashlib.sha256(canonical_json(rules.to_dict()).encode()).hexdigest()


@dataclass(frozen=True)
class EditorForm:
    texts: dict[str, str]
    sample: dict[str, str] = field(default_factory=dict)
    version: str = ""
    previewed: str = ""

    @classmethod
    def of(cls, rules: RuleSet) -> EditorForm:
        data = rules.to_dict()
        return cls({key: _yaml(data.get(key)) for key, _, _ in LAYER_TEXTS})

    @classmethod
    def read(cls, form: Mapping[str, Any]) -> EditorForm:
        def text(name: str) -> str:
            value = form.get(name)
            return value if isinstance(value, str) else ""

        return cls(
            {key: text(f"layer_{key}") for key, _, _ in LAYER_TEXTS},
            {name: text(f"sample_{name}") for name in SAMPLE_FIELDS},
            text("version").strip(),
            text("previewed").strip(),
        )

    def proposed(self) -> RuleSet:
        """The rules these texts make; InvalidInput (ConfigError) naming the layer and field."""
        data: dict[str, Any] = {}
        for key, text in self.texts.items():
            try:
                value = yaml.safe_load(text) if text.strip() else None
            except yaml.YAMLError as exc:
                raise InvalidInput(f"{LABELS[key]}: not valid YAML: {_first_line(exc)}") from None
            if value is None:
                continue
            if not isinstance(value, dict):
                kind = type(value).__name__
                raise InvalidInput(f"{LABELS[key]}: write a mapping (name: settings), not a {kind}")
            data[key] = value
        rules = RuleSet.from_dict(data)
        rules.refuse_callables()
        return rules

    def sample_call(self) -> SampleCall | None:
        """The sample call to explain (None without a tool); InvalidInput if its args are not a
        JSON object."""
        tool = self.sample.get("tool", "").strip()
        if not tool:
            return None
        raw = self.sample.get("args", "").strip()
        args = read_json(raw, "args", malformed="The args are not valid JSON") if raw else None
        if args is not None and not isinstance(args, dict):
            raise InvalidInput('The args must be a JSON object, like {"env": "prod"}')

        def optional(name: str) -> str | None:
            return self.sample.get(name, "").strip() or None

        return SampleCall(
            tool=tool,
            agent=optional("agent"),
            app=optional("app"),
            requester=optional("requester"),
            args=args,
        )

    def applied_version(self) -> int:
        """The version the preview compared with; InvalidInput without a preview."""
        if not self.version.isdigit() or not self.previewed:
            raise InvalidInput("Preview the change first: Apply applies what the preview showed")
        return int(self.version)


def _yaml(value: Any) -> str:
    if not value:
        return ""
    return yaml.safe_dump(value, sort_keys=False, allow_unicode=True)


def _first_line(exc: yaml.YAMLError) -> str:
    return " ".join(str(exc).split())
