"""Haystack 3.4 loads only classes of trusted modules: importing signoff's Haystack package puts
it on that allowlist, so an Agent (alone, or in a Pipeline's YAML) with `SignoffConfirmationHook`,
`SignoffConfirmationStrategy`, `SignoffConfirmationUI` and `SignoffPauseHook` round-trips in a
fresh process that adds nothing else; without the import Haystack refuses, naming the module."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.integrations.processes import SRC, run

pytest.importorskip("haystack")

SCRIPT = Path(__file__).with_name("hs_serialized.py")


def in_a_fresh_process(tmp_path: Path, *args: str) -> dict[str, Any]:
    env = {
        **os.environ,
        "PYTHONPATH": SRC,
        "SIGNOFF_DB": str(tmp_path / "signoff.db"),
        "HAYSTACK_DESERIALIZATION_ALLOWLIST": "",
        "HAYSTACK_UNSAFE_DESERIALIZATION": "",
    }
    env.pop("SIGNOFF_URL", None)
    out: dict[str, Any] = json.loads(run(sys.executable, str(SCRIPT), *args, env=env).splitlines()[-1])
    return out


@pytest.fixture
def saved(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    dumped = in_a_fresh_process(tmp_path, "dump")
    path = tmp_path / "agent.json"
    path.write_text(json.dumps(dumped))
    return path, dumped


def test_an_agent_with_every_signoff_class_round_trips_through_dict_and_yaml(
    tmp_path: Path, saved: tuple[Path, dict[str, Any]]
) -> None:
    path, dumped = saved
    assert "signoff.integrations.haystack.strategy.SignoffConfirmationStrategy" in dumped["yaml"]
    assert "signoff.integrations.haystack.ui.SignoffConfirmationUI" in dumped["yaml"]
    loaded = in_a_fresh_process(tmp_path, "load", str(path))
    assert "refused" not in loaded, loaded.get("refused")
    assert loaded["types"] == [
        "signoff.integrations.haystack.hook.SignoffConfirmationHook",
        "signoff.integrations.haystack.pause.SignoffPauseHook",
        "haystack.hooks.human_in_the_loop.hooks.ConfirmationHook",
    ]
    assert loaded["strategies"] == [
        {"send_email": "SignoffConfirmationStrategy"},
        {"('send_email', 'wire_money')": "SignoffConfirmationStrategy", "*": "SignoffConfirmationStrategy"},
        {"delete_records": "BlockingConfirmationStrategy"},
    ]
    assert loaded["agent"] == dumped["agent"]  # every setting came back: rules, scope, timeouts, the UI
    assert loaded["pipeline_agent"] == dumped["agent"]
    assert yaml.safe_load(loaded["yaml"]) == yaml.safe_load(dumped["yaml"])  # (anchors aside)


def test_without_importing_signoff_haystack_refuses_and_names_the_module(
    tmp_path: Path, saved: tuple[Path, dict[str, Any]]
) -> None:
    path, _ = saved
    refused = in_a_fresh_process(tmp_path, "load-bare", str(path))["refused"]
    assert "signoff.integrations.haystack" in refused
    assert "not on the trusted-module allowlist" in refused


def test_only_signoffs_haystack_package_is_trusted() -> None:
    from haystack.core.serialization_security import _is_module_allowed

    import signoff.integrations.haystack  # noqa: F401

    assert _is_module_allowed("signoff.integrations.haystack.strategy")
    assert not _is_module_allowed("signoff.gate")
    assert not _is_module_allowed("signoff")
