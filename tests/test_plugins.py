"""Channels and adapters anyone can add: throw-away packages (a `*.dist-info` directory beside
their modules, as pip would install them) register a channel kind and an adapter through the
entry-point groups `signoff.channels` and `signoff.integrations`; `signoff plugins` lists them
with signoff's own, the channel registry builds the new kind, and a plugin that raises on import
is reported and skipped."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest

import signoff
from signoff import plugins
from signoff.channel_admin import ChannelChange, ChannelPlace, add_channel
from signoff.channels import ChannelRegistry, parse_config
from signoff.channels.registry import build_channel, kinds
from signoff.destinations import Destinations
from signoff.errors import ConfigError, InvalidInput
from signoff.store import Store

from .live import LiveServer
from .plugin_packages import install, run_signoff
from .test_outbox import QUICK, ask, wait_until

CHANNEL = """
from signoff.channels.contract import Channel
from signoff.channels.kind_settings import KindSettings, Setting


class AcmeChannel(Channel):
    kind = "acme"
    admin_settings = KindSettings("acme", "Acme Pager", (Setting("prefix", "Prefix", required=True),))

    def __init__(self, name, prefix):
        super().__init__(name)
        self.prefix = prefix
        self.sent = []

    @classmethod
    def from_config(cls, config):
        return cls(config.name, config.required("prefix"))

    async def send(self, notice, target):
        self.sent.append((target, self.prefix + notice.title))
        return {"id": len(self.sent)}
"""
ADAPTER = '''
def approvals(gate):
    """What an adapter hands its framework: here, only the gate it was given."""
    return {"gate": gate}
'''
BROKEN = 'raise RuntimeError("broken on purpose")\n'


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One good package (a channel and an adapter) and one whose module raises on import."""
    root = tmp_path_factory.mktemp("site")
    install(
        root,
        "acme-signoff",
        "1.4",
        {
            "acme_signoff/__init__.py": "",
            "acme_signoff/channel.py": CHANNEL,
            "acme_signoff/adapter.py": ADAPTER,
        },
        """
        [signoff.channels]
        acme = acme_signoff.channel:AcmeChannel

        [signoff.integrations]
        acme = acme_signoff.adapter
        """,
    )
    install(
        root,
        "broken-plugin",
        "2.0",
        {"broken_plugin/__init__.py": BROKEN, "exiting_plugin.py": "raise SystemExit(3)\n"},
        """
        [signoff.channels]
        brokenkind = broken_plugin:Channel

        [signoff.integrations]
        broken = broken_plugin
        exits = exiting_plugin
        """,
    )
    return root


@pytest.fixture
def on_path(site: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(site))
    return site


def _listed(site: Path) -> dict[tuple[str, str], dict[str, Any]]:
    done = run_signoff(site, "plugins", "--json")
    assert done.returncode == 0, done.stderr
    return {(entry["group"], entry["name"]): entry for entry in json.loads(done.stdout)}


def test_signoff_plugins_lists_an_installed_package_with_signoffs_own(site: Path) -> None:
    listed = _listed(site)
    channel = listed[(plugins.CHANNELS, "acme")]
    assert channel["module"] == "acme_signoff.channel"
    assert channel["target"] == "acme_signoff.channel:AcmeChannel"
    assert (channel["distribution"], channel["version"], channel["error"]) == ("acme-signoff", "1.4", None)
    adapter = listed[(plugins.INTEGRATIONS, "acme")]
    assert (adapter["module"], adapter["distribution"], adapter["error"]) == (
        "acme_signoff.adapter",
        "acme-signoff",
        None,
    )
    shipped_channels = {"slack", "wecom", "feishu", "email", "text", "recording"}
    shipped_adapters = {
        "langchain",
        "haystack",
        "pydantic_ai",
        "openai_agents",
        "agent_framework",
        "google_adk",
        "crewai",
        "strands",
        "claude_agent_sdk",
    }
    shipped = {(plugins.CHANNELS, name) for name in shipped_channels}
    shipped |= {(plugins.INTEGRATIONS, name) for name in shipped_adapters}
    for key in shipped:
        assert (listed[key]["distribution"], listed[key]["version"]) == ("signoff", signoff.__version__)
        assert listed[key]["module"].startswith("signoff.")


def test_a_plugin_that_raises_on_import_is_marked_and_the_rest_still_listed(site: Path) -> None:
    listed = _listed(site)
    for key in [(plugins.CHANNELS, "brokenkind"), (plugins.INTEGRATIONS, "broken")]:
        assert listed[key]["distribution"] == "broken-plugin"
        assert listed[key]["error"] == "RuntimeError: broken on purpose"
    assert listed[(plugins.CHANNELS, "acme")]["error"] is None
    done = run_signoff(site, "plugins")
    assert done.returncode == 0, done.stderr
    broken = "signoff.channels  brokenkind  broken_plugin  broken-plugin 2.0  BROKEN: RuntimeError: broken"
    assert f"{broken} on purpose" in done.stdout
    assert "signoff.channels  acme  acme_signoff.channel  acme-signoff 1.4  ok" in done.stdout
    assert (
        "signoff.integrations  exits  exiting_plugin  broken-plugin 2.0  BROKEN: SystemExit: 3" in done.stdout
    )
    # the three broken on purpose, and signoff's own adapters whose extra is not installed here
    # (CrewAI and strands-agents cannot be installed beside the [mcp] extra: "install its extra: ...")
    unloadable = [entry for entry in listed.values() if entry["error"] is not None]
    missing_extras = [e for e in unloadable if e["distribution"] == "signoff"]
    assert all("(install its extra: pip install 'signoff[" in e["error"] for e in missing_extras)
    assert len(unloadable) == 3 + len(missing_extras)
    assert f"{len(unloadable)} of " in done.stderr and "cannot be loaded and are skipped" in done.stderr


def test_the_channels_cli_builds_the_new_kind_from_a_channels_file(site: Path, tmp_path: Path) -> None:
    channels = tmp_path / "channels.yaml"
    channels.write_text("channels:\n  pager:\n    kind: acme\n    prefix: '[acme] '\n")
    done = run_signoff(
        site, "--db", str(tmp_path / "s.db"), "channels", "list", "--channels", str(channels), "--json"
    )
    assert done.returncode == 0, done.stderr
    [view] = json.loads(done.stdout)
    assert (view["name"], view["kind"], view["state"]) == ("pager", "acme", "ready")


def test_the_channel_registry_knows_an_installed_kind_and_builds_it(on_path: Path) -> None:
    assert {"acme", "slack", "recording"} <= set(kinds())
    registry = ChannelRegistry.from_configs(parse_config({"pager": {"kind": "acme", "prefix": "[acme] "}}))
    channel = registry.get("pager")
    assert channel is not None and type(channel).__name__ == "AcmeChannel"
    assert (channel.kind, channel.name) == ("acme", "pager")
    notice: Any = type("N", (), {"title": "AI wants to run: send_email"})()
    assert asyncio.run(channel.send(notice, "U1")) == {"id": 1}
    assert channel.sent == [("U1", "[acme] AI wants to run: send_email")]  # type: ignore[attr-defined]


def test_a_kind_whose_plugin_raises_on_import_is_refused_and_logged(
    on_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        caplog.at_level(logging.WARNING, logger="signoff.plugins"),
        pytest.raises(
            ConfigError, match=r"channel 'b' \(brokenkind\) cannot be loaded: RuntimeError: broken on purpose"
        ),
    ):
        build_channel(parse_config({"b": {"kind": "brokenkind"}})["b"])
    assert "broken on purpose" in caplog.text
    good = parse_config({"r": {"kind": "recording"}, "pager": {"kind": "acme", "prefix": "> "}})
    assert ChannelRegistry.from_configs(good).names() == ["pager", "r"]


def test_discover_reports_the_broken_and_keeps_the_rest(on_path: Path) -> None:
    found = {(plugin.group, plugin.name): plugin for plugin in plugins.discover()}
    assert found[(plugins.INTEGRATIONS, "broken")].broken
    assert not found[(plugins.INTEGRATIONS, "acme")].broken
    assert found[(plugins.CHANNELS, "slack")].error is None
    unchecked = {(plugin.group, plugin.name): plugin for plugin in plugins.discover(check=False)}
    assert unchecked[(plugins.INTEGRATIONS, "broken")].error is None


def test_an_adapter_loads_through_its_entry_point(on_path: Path) -> None:
    adapter = plugins.load(plugins.INTEGRATIONS, "acme")
    assert adapter.approvals("g") == {"gate": "g"}
    assert plugins.load(plugins.INTEGRATIONS, "langchain").__name__ == "signoff.integrations.langchain"
    with pytest.raises(ConfigError, match="no plugin 'nosuch' is installed"):
        plugins.load(plugins.INTEGRATIONS, "nosuch")
    with pytest.raises(ConfigError, match="cannot be loaded: RuntimeError: broken on purpose"):
        plugins.load(plugins.INTEGRATIONS, "broken")
    with pytest.raises(ConfigError, match="unknown plugin group"):
        plugins.load("signoff.other", "acme")


def test_an_unknown_kind_is_refused_naming_the_installed_ones(on_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown kind 'pigeon' \(known: acme, brokenkind, email"):
        build_channel(parse_config({"x": {"kind": "pigeon"}})["x"])


def test_a_kind_two_packages_register_is_refused(
    on_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(
        tmp_path,
        "other-acme",
        "0.1",
        {"other_acme.py": "class Other:\n    pass\n"},
        "[signoff.channels]\nacme = other_acme:Other\n",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError, match="'acme' is registered more than once: by "):
        build_channel(parse_config({"pager": {"kind": "acme", "prefix": "> "}})["pager"])
    twice = [
        plugin
        for plugin in plugins.discover(check=False)
        if plugin.name == "acme" and plugin.group == plugins.CHANNELS
    ]
    assert {plugin.distribution for plugin in twice} == {"acme-signoff", "other-acme"}
    assert all(plugin.broken for plugin in twice)


def test_a_plugin_that_is_no_channel_class_is_refused(
    on_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(
        tmp_path,
        "not-a-channel",
        "0.1",
        {"not_channel.py": "VALUE = 1\n"},
        "[signoff.channels]\nodd = not_channel:VALUE\n",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError, match="the odd plugin is not a channel class"):
        build_channel(parse_config({"o": {"kind": "odd"}})["o"])


def test_a_running_server_sends_through_an_installed_channel_kind(on_path: Path, sqlite_store: Store) -> None:
    sqlite_store.add_user("alice", role="member", actor="test")
    sqlite_store.set_address("alice", "acme", "U-ALICE", actor="test")  # the plugin's kind is an address kind
    registry = ChannelRegistry.from_configs(parse_config({"pager": {"kind": "acme", "prefix": "[acme] "}}))
    channel: Any = registry.get("pager")
    with LiveServer(sqlite_store, QUICK, channels=registry):
        ask(sqlite_store, approvers=("alice",), channels=("pager",))
        wait_until(lambda: channel.sent)
    assert channel.sent == [("U-ALICE", "[acme] AI wants to run: send_email")]


def test_only_an_installed_plugins_kind_is_an_address_kind(on_path: Path, sqlite_store: Store) -> None:
    sqlite_store.add_user("bob", role="member", actor="test")
    with pytest.raises(InvalidInput, match="unknown address kind 'pigeon'"):
        sqlite_store.set_address("bob", "pigeon", "P1", actor="test")
    with pytest.raises(InvalidInput, match="unknown address kind 'text'"):
        sqlite_store.set_address("bob", "text", "T1", actor="test")
    sqlite_store.set_address("bob", "acme", "U-BOB", actor="test")
    assert sqlite_store.address_of("bob", "acme") == "U-BOB"


def test_the_cli_sets_a_plugin_address_and_refuses_all_if_one_is_unknown(site: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    assert run_signoff(site, "--db", db, "users", "add", "carol").returncode == 0
    refused = run_signoff(
        site, "--db", db, "users", "set-address", "carol", "--slack", "U1", "--address", "pigeon:P1"
    )
    assert refused.returncode != 0 and "unknown address kind 'pigeon'" in refused.stderr
    done = run_signoff(site, "--db", db, "users", "set-address", "carol", "--address", "acme:U-CAROL")
    assert done.returncode == 0, done.stderr
    assert "carol: acme = U-CAROL (verified)" in done.stdout
    listed = run_signoff(site, "--db", db, "users", "addresses", "carol")
    assert "acme" in listed.stdout and "U-CAROL" in listed.stdout and "U1" not in listed.stdout


def test_an_admin_adds_a_channel_of_a_plugin_kind_that_says_its_settings(
    on_path: Path, sqlite_store: Store
) -> None:
    registry = ChannelRegistry()
    place = ChannelPlace.local(sqlite_store, registry, key=None, destinations=Destinations())
    with pytest.raises(InvalidInput, match="acme has no setting 'colour'"):
        add_channel(
            place, "pager", ChannelChange(kind="acme", settings={"colour": "red"}), actor="root", via="test"
        )
    with pytest.raises(InvalidInput, match=r"unknown channel kind 'pigeon' \(known: slack, .*acme"):
        add_channel(place, "bad", ChannelChange(kind="pigeon"), actor="root", via="test")
    with pytest.raises(
        InvalidInput, match="channel kind 'brokenkind' cannot be loaded: RuntimeError: broken"
    ):
        add_channel(place, "bad", ChannelChange(kind="brokenkind"), actor="root", via="test")
    assert sqlite_store.stored_channel("pager") is None and sqlite_store.stored_channel("bad") is None
    add_channel(
        place, "pager", ChannelChange(kind="acme", settings={"prefix": "> "}), actor="root", via="test"
    )
    channel: Any = registry.get("pager")
    assert type(channel).__name__ == "AcmeChannel" and channel.prefix == "> "
    assert registry.source_of("pager") == "store"


def test_a_plugin_kind_that_says_no_settings_is_left_to_the_channels_file(
    on_path: Path, sqlite_store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(
        tmp_path, "quiet-channel", "0.1", {"quiet_channel.py": CHANNEL.replace("admin_settings", "_x")}, ""
    )
    (next(tmp_path.glob("*.dist-info")) / "entry_points.txt").write_text(
        "[signoff.channels]\nquiet = quiet_channel:AcmeChannel\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    place = ChannelPlace.local(sqlite_store, ChannelRegistry(), key=None, destinations=Destinations())
    with pytest.raises(InvalidInput, match=r"'quiet' says no settings for admins .*channels file"):
        add_channel(
            place, "q", ChannelChange(kind="quiet", settings={"prefix": "> "}), actor="root", via="test"
        )
    assert sqlite_store.stored_channel("q") is None
    built = build_channel(parse_config({"q": {"kind": "quiet", "prefix": "> "}})["q"])
    assert type(built).__name__ == "AcmeChannel"
