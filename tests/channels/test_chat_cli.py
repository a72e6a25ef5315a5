"""`signoff channels test NAME` on WeCom and Feishu, against the local stand-ins: a test card is
sent, and what the platform said is reported; a second test works too (WeCom refuses a
task_id it has seen)."""

from __future__ import annotations

import uuid
from pathlib import Path

import yaml
from typer.testing import CliRunner

from signoff.cli import app

from . import platforms

AES_KEY = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG"


def test_a_test_card_reaches_both_platforms(tmp_path: Path) -> None:
    app_id = f"cli_{uuid.uuid4().hex[:12]}"
    with platforms.wecom(corp_id="wwcorp") as wecom, platforms.feishu(app_id=app_id) as feishu:
        channels = tmp_path / "channels.yaml"
        channels.write_text(
            yaml.safe_dump(
                {
                    "channels": {
                        "wecom": {
                            "corp_id": "wwcorp",
                            "agent_id": 1000002,
                            "corp_secret": "corp-secret",
                            "token": "t",
                            "encoding_aes_key": AES_KEY,
                            "base_url": wecom.url,
                        },
                        "feishu": {
                            "app_id": app_id,
                            "app_secret": "app-secret",
                            "encrypt_key": "k",
                            "verification_token": "v",
                            "base_url": feishu.url,
                        },
                    }
                }
            ),
            encoding="utf-8",
        )
        runner = CliRunner()
        for _ in range(2):
            done = runner.invoke(
                app, ["channels", "test", "wecom", "--target", "zhangsan", "--channels", str(channels)]
            )
            assert done.exit_code == 0, done.output
            assert done.output.startswith("sent on wecom (wecom) to zhangsan in ")
            assert "response_code" in done.output
        done = runner.invoke(
            app, ["channels", "test", "feishu", "--target", "ou_alice", "--channels", str(channels)]
        )
        assert done.exit_code == 0, done.output
        assert "message_id" in done.output
        cards = [call.body["template_card"] for call in wecom.called("POST", "/cgi-bin/message/send")]
        assert [card["main_title"]["title"] for card in cards] == ["AI wants to run: signoff.test"] * 2
        assert len(feishu.called("POST", "/open-apis/im/v1/messages")) == 1
