"""`signoff channels …` and `signoff webhooks …` (issue 18), on the database itself (acting as
`--as`, with this machine's secrets key) and through a server (`--url`, as the token's user): the
same commands and output either way; every change one audit entry; a secret is read from a
prompt, a file or a variable, never from the command line, and never printed again."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from standardwebhooks import Webhook as Verifier
from typer.testing import CliRunner, Result

from signoff.channels.sealing import SecretsKey
from signoff.cli import app
from signoff.store import SQLiteStore

from .channel_admin_support import BRIDGE_SECRET, KEY, OTHER_SECRET, SETTINGS
from .live import LiveServer
from .receivers import Receiver

Cli = Callable[..., Result]


@pytest.fixture(params=["local", "remote"])
def cli(request: pytest.FixtureRequest, sqlite_store: SQLiteStore) -> Iterator[Cli]:
    """The CLI on the test's database (as root, with the key) or through a server over it."""
    env = {"COLUMNS": "200", "SIGNOFF_CHANNELS": None, "BRIDGE": BRIDGE_SECRET}
    if request.param == "local":
        sqlite_store.add_user("root", role="admin", actor="test")
        env.update(SIGNOFF_DB=f"sqlite:///{sqlite_store.path}", SIGNOFF_URL=None, SIGNOFF_TOKEN=None)
        env.update(SIGNOFF_SECRETS_KEY=KEY.text, SIGNOFF_ALLOW_PRIVATE_WEBHOOKS="1")
        env.update(LOGNAME="root", USER="root")  # who acts on the database (the OS user)
        runner = CliRunner(env=env)
        yield lambda *args, input=None: runner.invoke(app, list(args), input=input)
        return
    with LiveServer(sqlite_store, SETTINGS) as server:
        env.update(SIGNOFF_DB=None, SIGNOFF_URL=server.url, SIGNOFF_TOKEN=server.user("root", "admin"))
        env.update(SIGNOFF_SECRETS_KEY=None)  # the server's key seals; the CLI has none
        runner = CliRunner(env=env)
        yield lambda *args, input=None: runner.invoke(app, list(args), input=input)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as receiving:
        yield receiving


def ok(result: Result) -> str:
    assert result.exit_code == 0, result.output
    return result.output


def test_a_channel_is_added_edited_tried_disabled_and_enabled(
    cli: Cli, sqlite_store: SQLiteStore, receiver: Receiver, tmp_path: Path
) -> None:
    added = ok(
        cli(
            "channels",
            "add",
            "wechat",
            "--kind",
            "text",
            "--set",
            "platform=wechat",
            "--set",
            f"send_url={receiver.url}",
            "--secret",
            "secret=env:BRIDGE",
        )
    )
    assert added.startswith("Added wechat  text  stored, version 1  ready")
    assert "secrets set: secret" in added
    listed = ok(cli("channels", "list"))
    assert "wechat  text  stored, version 1  ready" in listed
    [shown] = json.loads(ok(cli("channels", "list", "--json")))
    assert shown["secrets"] == {"secret": "set"} and shown["settings"]["platform"] == "wechat"

    edited = ok(
        cli("channels", "edit", "wechat", "--timeout", "5", "--secret", "secret", input=OTHER_SECRET + "\n")
    )
    assert "stored, version 2" in edited
    tried = ok(cli("channels", "test", "wechat", "--target", "wxid_1"))
    assert tried.startswith("sent on wechat (text) to wxid_1 in ")
    (post,) = receiver.wait_for(1)
    assert Verifier(OTHER_SECRET).verify(post.body, post.headers)["to"] == "wxid_1"
    assert "disabled" in ok(cli("channels", "disable", "wechat"))
    refused = cli("channels", "test", "wechat", "--target", "wxid_1")
    assert refused.exit_code == 1 and "disabled" in refused.output
    assert "ready" in ok(cli("channels", "enable", "wechat"))
    assert "Nothing was sent here yet." in ok(cli("channels", "deliveries", "wechat"))

    actions = [entry.action for entry in sqlite_store.audit_entries() if entry.action.startswith("channel.")]
    assert actions == [
        "channel.added",
        "channel.changed",
        "channel.tested",
        "channel.disabled",
        "channel.enabled",
    ]
    assert {entry.actor for entry in sqlite_store.audit_entries() if entry.action.startswith("channel.")} == {
        "root"
    }
    exported = ok(cli("audit", "export"))
    for output in (added, listed, edited, tried, exported, ok(cli("channels", "list", "--json"))):
        assert BRIDGE_SECRET not in output and OTHER_SECRET not in output


def test_a_secret_on_the_command_line_is_refused_and_a_file_works(
    cli: Cli, sqlite_store: SQLiteStore, tmp_path: Path
) -> None:
    refused = cli("channels", "add", "rec", "--kind", "recording", "--secret", "secret=hunter2")
    assert refused.exit_code == 2 and "seen by others" in refused.output
    assert sqlite_store.stored_channels() == []
    (tmp_path / "secret").write_text("from-a-file\n", encoding="utf-8")
    ok(cli("channels", "add", "rec", "--kind", "recording", "--secret", f"secret=@{tmp_path / 'secret'}"))
    stored = sqlite_store.stored_channel("rec")
    assert stored is not None and stored.config(KEY).secret("secret") == "from-a-file"
    unknown = cli("channels", "add", "x", "--kind", "recording", "--set", "nope=1")
    assert unknown.exit_code == 1 and "recording has no setting 'nope'" in unknown.output


def test_webhooks_are_edited_tried_disabled_and_their_secret_printed_once(
    cli: Cli, sqlite_store: SQLiteStore, receiver: Receiver
) -> None:
    added = ok(cli("webhooks", "add", receiver.url, "--events", "request.created"))
    secret = added.split("keep it safe): ")[1].strip()
    hook = added.split()[2]
    listed = ok(cli("webhooks", "list"))
    assert hook in listed and secret not in listed
    assert "request.decided" in ok(cli("webhooks", "edit", hook, "--events", "request.decided"))
    tried = ok(cli("webhooks", "test", hook))
    assert tried.startswith(f"sent on {hook} (webhook) to {receiver.url}")
    (post,) = receiver.wait_for(1)
    assert Verifier(secret).verify(post.body, post.headers)["type"] == "webhook.test"
    assert "DISABLED" in ok(cli("webhooks", "disable", hook))
    assert "DISABLED" not in ok(cli("webhooks", "enable", hook))
    assert "Nothing was sent here yet." in ok(cli("webhooks", "deliveries", hook))
    rotated = ok(cli("webhooks", "rotate", hook)).split("(shown once): ")[1].strip()
    assert "rotating" in ok(cli("webhooks", "list"))
    ok(cli("webhooks", "remove", hook))
    actions = [entry.action for entry in sqlite_store.audit_entries() if entry.action.startswith("webhook.")]
    assert actions == [
        "webhook.added",
        "webhook.changed",
        "webhook.tested",
        "webhook.disabled",
        "webhook.enabled",
        "webhook.rotated",
        "webhook.removed",
    ]
    exported = ok(cli("audit", "export"))
    assert secret not in exported and rotated not in exported


def test_a_new_key_is_a_key() -> None:
    printed = CliRunner().invoke(app, ["channels", "new-key"])
    assert printed.exit_code == 0
    assert SecretsKey.from_text(printed.output).id != KEY.id
