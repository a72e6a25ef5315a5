"""The Slack channel built from a channels file (secrets from the environment, never shown) and
tried with `signoff channels test`, against a fake Slack Web API."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from signoff.channels import ChannelRegistry
from signoff.channels.slack import SlackChannel
from signoff.cli import app
from signoff.errors import ConfigError

from .slack_fake import TOKEN, FakeSlack


def channels_file(tmp_path: Path, api_url: str) -> Path:
    path = tmp_path / "channels.yaml"
    path.write_text(
        "channels:\n"
        "  slack:\n"
        "    locale: zh\n"
        "    timeout: 4\n"
        "    bot_token: {env: SLACK_BOT_TOKEN}\n"
        "    signing_secret: {env: SLACK_SIGNING_SECRET}\n"
        f"    api_url: {api_url}\n",
        encoding="utf-8",
    )
    return path


def test_a_configured_slack_channel_sends_a_test_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", TOKEN)
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "shh")
    with FakeSlack() as fake:
        path = channels_file(tmp_path, fake.api_url)
        registry = ChannelRegistry.load(path)
        channel = registry.get("slack")
        assert isinstance(channel, SlackChannel)
        assert (channel.locale, channel.timeout, channel.api_url) == ("zh", 4.0, fake.api_url)
        assert TOKEN not in str(registry.describe()) and "shh" not in str(registry.describe())
        result = CliRunner().invoke(
            app, ["channels", "test", "slack", "--target", "U42", "--channels", str(path)]
        )
        assert result.exit_code == 0, result.output
        assert result.output.startswith("sent on slack (slack) to U42 in ")
        assert "'channel': 'D42'" in result.output
        [call] = fake.of("chat.postMessage")
        assert call.body["channel"] == "U42"
        assert call.body["blocks"][0]["text"]["text"] == "AI wants to run: signoff.test"


def test_a_slack_channel_without_its_secrets_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "channels.yaml"
    path.write_text("channels:\n  slack:\n    bot_token: xoxb-1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="signing_secret"):
        ChannelRegistry.load(path)
