"""WeCom and Feishu channels built from the channels file as `signoff serve --channels` reads
it: settings from the environment, secrets never shown, missing settings named."""

from __future__ import annotations

import pytest

from signoff.channels import ChannelRegistry, parse_config
from signoff.channels.feishu import FeishuChannel
from signoff.channels.wecom import WeComChannel
from signoff.errors import ConfigError

AES_KEY = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG"
FILE = {
    "channels": {
        "wecom": {
            "corp_id": "wwcorp",
            "agent_id": 1000002,
            "corp_secret": {"env": "WECOM_SECRET"},
            "token": {"env": "WECOM_TOKEN"},
            "encoding_aes_key": {"env": "WECOM_AES"},
            "locale": "zh",
        },
        "lark": {
            "kind": "feishu",
            "app_id": "cli_config",
            "app_secret": {"env": "FEISHU_SECRET"},
            "encrypt_key": {"env": "FEISHU_KEY"},
            "verification_token": {"env": "FEISHU_TOKEN"},
            "base_url": "https://open.larksuite.com",
            "timeout": 4,
        },
    }
}
ENV = {
    "WECOM_SECRET": "corp-secret-value",
    "WECOM_TOKEN": "wecom-token-value",
    "WECOM_AES": AES_KEY,
    "FEISHU_SECRET": "app-secret-value",
    "FEISHU_KEY": "encrypt-key-value",
    "FEISHU_TOKEN": "verification-token-value",
}


def test_both_kinds_build_from_the_channels_file() -> None:
    registry = ChannelRegistry.from_configs(parse_config(FILE, env=ENV))
    wecom, lark = registry.get("wecom"), registry.get("lark")
    assert isinstance(wecom, WeComChannel) and wecom.agent_id == 1000002 and wecom.address_kind == "wecom"
    assert isinstance(lark, FeishuChannel) and lark.address_kind == "feishu" and lark.timeout == 4
    described = str(registry.describe())
    for secret in ENV.values():
        assert secret not in described
    assert "***" in described


@pytest.mark.parametrize(
    ("name", "missing"), [("wecom", "corp_id"), ("wecom", "encoding_aes_key"), ("lark", "encrypt_key")]
)
def test_a_missing_setting_is_named(name: str, missing: str) -> None:
    entry = {key: value for key, value in FILE["channels"][name].items() if key != missing}
    with pytest.raises(ConfigError, match=missing):
        ChannelRegistry.from_configs(parse_config({name: entry}, env=ENV))


@pytest.mark.parametrize(
    ("name", "url"), [("lark", "http://open.feishu.cn"), ("wecom", "http://qyapi.weixin.qq.com")]
)
def test_a_remote_http_base_url_is_refused(name: str, url: str) -> None:
    entry = {**FILE["channels"][name], "base_url": url}
    with pytest.raises(ConfigError, match="https"):
        ChannelRegistry.from_configs(parse_config({name: entry}, env=ENV))
