"""The settings each kind of channel takes, for channels an admin adds (the inbox's form, the
API and the CLI check against this): which are secrets, which are required, what type each is.

It imports no platform library: a kind's own class (its `signoff.channels` entry point) still
checks the values when the channel is built, as it does for a channels file; this says what may
be given at all, so that a misspelt setting is refused rather than ignored. A kind that a package adds
(`signoff.plugins`) can be added by admins too when its class says what it takes: a
`KindSettings` as its `admin_settings`; its class is imported for that.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .. import plugins
from ..errors import ConfigError, InvalidInput

SettingType = Literal["text", "int", "float", "choice"]


@dataclass(frozen=True)
class Setting:
    key: str
    label: str
    secret: bool = False
    required: bool = False
    type: SettingType = "text"
    choices: tuple[str, ...] = ()
    hint: str = ""

    def value(self, channel: str, given: Any) -> Any:
        """`given` (a form's text, or JSON) as this setting's type; InvalidInput naming it if not."""
        where = f"channel {channel!r}: {self.key}"
        if self.type in ("int", "float"):
            text = given.strip() if isinstance(given, str) else given
            if isinstance(text, bool) or not isinstance(text, int | float | str):
                raise InvalidInput(f"{where} must be a number")
            try:
                number = int(text) if self.type == "int" else float(text)
            except ValueError:
                raise InvalidInput(
                    f"{where} must be {'a whole' if self.type == 'int' else 'a'} number"
                ) from None
            if number < 0 or number != number or number in (float("inf"), float("-inf")):
                raise InvalidInput(f"{where} must be a finite number, 0 or more")
            return number
        if not isinstance(given, str):
            raise InvalidInput(f"{where} must be text")
        if self.type == "choice" and given not in self.choices:
            raise InvalidInput(f"{where} is one of {', '.join(self.choices)}")
        if len(given) > 4096:
            raise InvalidInput(f"{where} is longer than 4096 characters")
        return given


@dataclass(frozen=True)
class KindSettings:
    kind: str
    label: str
    settings: tuple[Setting, ...]

    def get(self, key: str) -> Setting | None:
        return next((setting for setting in self.settings if setting.key == key), None)

    @property
    def secrets(self) -> tuple[Setting, ...]:
        return tuple(setting for setting in self.settings if setting.secret)

    @property
    def plain(self) -> tuple[Setting, ...]:
        return tuple(setting for setting in self.settings if not setting.secret)


KIND_SETTINGS: dict[str, KindSettings] = {
    kind.kind: kind
    for kind in (
        KindSettings(
            "slack",
            "Slack",
            (
                Setting("bot_token", "Bot token (xoxb-…)", secret=True, required=True),
                Setting("signing_secret", "Signing secret", secret=True, required=True),
                Setting("api_url", "API address", hint="Default: https://slack.com/api/"),
            ),
        ),
        KindSettings(
            "wecom",
            "WeCom (企业微信)",
            (
                Setting("corp_id", "Corp ID", required=True),
                Setting("agent_id", "Agent ID", required=True, type="int"),
                Setting("corp_secret", "Corp secret", secret=True, required=True),
                Setting("token", "Callback token", secret=True, required=True),
                Setting("encoding_aes_key", "EncodingAESKey", secret=True, required=True),
                Setting("base_url", "API address", hint="Default: https://qyapi.weixin.qq.com"),
                Setting("window", "Callback window (seconds)", type="float", hint="Default: 300"),
            ),
        ),
        KindSettings(
            "feishu",
            "Feishu / Lark (飞书)",
            (
                Setting("app_id", "App ID", required=True),
                Setting("app_secret", "App secret", secret=True, required=True),
                Setting("encrypt_key", "Encrypt key", secret=True, required=True),
                Setting("verification_token", "Verification token", secret=True, required=True),
                Setting("base_url", "API address", hint="Default: https://open.feishu.cn"),
                Setting("window", "Callback window (seconds)", type="float", hint="Default: 300"),
            ),
        ),
        KindSettings(
            "email",
            "Email (SMTP)",
            (
                Setting("from", "From address", required=True),
                Setting("host", "SMTP host", hint="Default: 127.0.0.1"),
                Setting("port", "SMTP port", type="int", hint="Default: 25, 587 or 465 by security"),
                Setting("security", "Security", type="choice", choices=("none", "starttls", "tls")),
                Setting("username", "User name"),
                Setting("password", "Password", secret=True),
                Setting("ca_file", "CA file"),
                Setting("message_id_domain", "Message-ID domain"),
            ),
        ),
        KindSettings(
            "text",
            "Text bridge (WeChat, SMS…)",
            (
                Setting("platform", "Platform", required=True, hint="A short name: wechat"),
                Setting("send_url", "Bridge's send URL", required=True, hint="Public addresses only"),
                Setting("secret", "Signing secret (whsec_…)", secret=True, required=True),
                Setting("send_token", "Bridge's bearer token", secret=True),
            ),
        ),
        KindSettings(
            "recording",
            "Recording (kept in memory, for trying routing out)",
            (
                Setting("address_kind", "Address kind", hint="Default: recording"),
                Setting("fail", "Sends that fail first", type="int"),
                Setting("hang", "Seconds each send waits", type="float"),
                Setting("secret", "Callback secret", secret=True),
            ),
        ),
    )
}


def kind_settings(kind: str) -> KindSettings:
    found = KIND_SETTINGS.get(kind) or plugin_settings(kind)
    if found is not None:
        return found
    if kind in plugins.names(plugins.CHANNELS):
        try:
            plugins.load(plugins.CHANNELS, kind, what=f"channel kind {kind!r}")
        except ConfigError as exc:  # a broken plugin
            raise InvalidInput(exc.message) from None
        raise InvalidInput(
            f"the channel kind {kind!r} says no settings for admins (admin_settings): "
            "configure it in the channels file"
        )
    known = ", ".join(spec.kind for spec in every_kind_settings())
    raise InvalidInput(f"unknown channel kind {kind!r} (known: {known})")


def plugin_settings(kind: str) -> KindSettings | None:
    """What an installed plugin's kind takes, if its class says (`admin_settings`); None for a
    kind not installed, one that says nothing, or one whose plugin cannot be loaded (logged)."""
    if kind in KIND_SETTINGS or kind not in plugins.names(plugins.CHANNELS):
        return None
    try:
        channel_class = plugins.load(plugins.CHANNELS, kind)
    except ConfigError:
        return None
    declared = getattr(channel_class, "admin_settings", None)
    return declared if isinstance(declared, KindSettings) and declared.kind == kind else None


def every_kind_settings() -> list[KindSettings]:
    """signoff's own kinds, then the installed plugins' that admins can add."""
    added = (plugin_settings(kind) for kind in plugins.names(plugins.CHANNELS))
    return [*KIND_SETTINGS.values(), *(spec for spec in added if spec is not None)]


def settings_of(kind: str) -> KindSettings | None:
    """The kind's settings, or None (unknown, or a plugin that says nothing)."""
    return KIND_SETTINGS.get(kind) or plugin_settings(kind)


def checked_settings(
    name: str, kind: str, settings: Mapping[str, Any], secrets: Mapping[str, str]
) -> tuple[dict[str, Any], dict[str, str]]:
    """A channel's settings and secrets as its kind takes them: known keys only, each where it
    belongs (a secret among the settings is refused, so it is never stored or shown plainly),
    values of the right type, empty ones dropped, the required ones there."""
    spec = kind_settings(kind)
    plain: dict[str, Any] = {}
    for key, given in settings.items():
        setting = _known(spec, name, key)
        if setting.secret:
            raise InvalidInput(f"channel {name!r}: {key} is a secret: give it among the secrets")
        if given is not None and given != "":
            plain[key] = setting.value(name, given)
    hidden: dict[str, str] = {}
    for key, given in secrets.items():
        setting = _known(spec, name, key)
        if not setting.secret:
            raise InvalidInput(f"channel {name!r}: {key} is not a secret: give it among the settings")
        if given is not None and given != "":
            hidden[key] = setting.value(name, given)
    missing = [s.key for s in spec.settings if s.required and s.key not in plain and s.key not in hidden]
    if missing:
        raise InvalidInput(f"channel {name!r} ({kind}) needs {', '.join(missing)}")
    return plain, hidden


def _known(spec: KindSettings, name: str, key: str) -> Setting:
    setting = spec.get(key)
    if setting is None:
        known = ", ".join(setting.key for setting in spec.settings)
        raise InvalidInput(f"channel {name!r}: {spec.kind} has no setting {key!r} (it takes: {known})")
    return setting
