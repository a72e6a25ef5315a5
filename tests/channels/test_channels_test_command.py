"""`signoff channels test NAME` with the email and text channels: the test message goes out
through the real channel (a real SMTP server, a real HTTP receiver) and the command says what
came back, or why it failed."""

from __future__ import annotations

import base64
from pathlib import Path

import yaml
from standardwebhooks import Webhook
from typer.testing import CliRunner

from signoff.cli import app

from ..live import free_port
from ..receivers import Receiver
from .mailserver import MailServer

SECRET = "whsec_" + base64.b64encode(b"the channels-test bridge secret!").decode()


def run(tmp_path: Path, channels: dict[str, object], *args: str) -> tuple[int, str]:
    path = tmp_path / "channels.yaml"
    path.write_text(yaml.safe_dump({"channels": channels}), encoding="utf-8")
    runner = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None, "SIGNOFF_CHANNELS": None})
    result = runner.invoke(
        app,
        [
            "--db",
            str(tmp_path / "db.sqlite"),
            "channels",
            "test",
            *args,
            "--channels",
            str(path),
            "--allow-private-webhooks",  # the receivers are on 127.0.0.1
        ],
    )
    return result.exit_code, result.output


def test_a_test_mail_arrives_and_the_command_says_its_message_id(tmp_path: Path) -> None:
    with MailServer() as smtp:
        code, output = run(
            tmp_path,
            {"mail": {"kind": "email", "from": "approvals@example.com", "port": smtp.port}},
            "mail",
            "--target",
            "alice@example.com",
        )
        (got,) = smtp.handler.wait_for(1)
    assert code == 0, output
    assert output.startswith("sent on mail (email) to alice@example.com in ")
    assert "<req_test." in output
    assert got.recipients == ["alice@example.com"]
    assert "if you can read this, the channel works" in got.raw.decode()


def test_a_test_text_reaches_the_bridge_signed(tmp_path: Path) -> None:
    with Receiver() as bridge:
        channels = {
            "wechat": {"kind": "text", "platform": "wechat", "send_url": bridge.url, "secret": SECRET}
        }
        code, output = run(tmp_path, channels, "wechat", "--target", "wxid_1")
        (post,) = bridge.wait_for(1)
    assert code == 0, output
    assert output.startswith("sent on wechat (text) to wxid_1 in ")
    body = Webhook(SECRET).verify(post.body, post.headers)
    assert body["to"] == "wxid_1"
    assert body["text"].startswith("🔔 Waiting for your decision")


def test_a_failing_channel_says_why(tmp_path: Path) -> None:
    with Receiver(status=401) as bridge:
        channels = {
            "wechat": {"kind": "text", "platform": "wechat", "send_url": bridge.url, "secret": SECRET}
        }
        code, output = run(tmp_path, channels, "wechat", "--target", "wxid_1")
    assert code == 1
    assert "FAILED on wechat (text)" in output
    assert "the wechat bridge answered 401" in output
    nobody_listens = free_port()
    code, output = run(
        tmp_path,
        {"mail": {"kind": "email", "from": "approvals@example.com", "port": nobody_listens, "timeout": 2}},
        "mail",
        "--target",
        "alice@example.com",
    )
    assert code == 1
    assert "FAILED on mail (email)" in output
    assert "ConnectionRefusedError" in output
