"""The channels a server is configured with, by name: built from a config file (`signoff serve
--channels FILE`, or the file `SIGNOFF_CHANNELS` names), each by its kind's factory.

    channels:
      slack:                       # the name rules use: `channels: [slack]`
        kind: slack                # defaults to the name
        locale: zh                 # en (default) or zh
        timeout: 10                # seconds per send (default 10)
        concurrency: 8             # deliveries under way at once (default 8)
        bot_token: {env: SLACK_BOT_TOKEN}
        signing_secret: {env: SLACK_SIGNING_SECRET}

A value `{env: NAME}` is read from the environment when the server starts. Settings that are
secrets (tokens, passwords, keys: see `SECRET_WORDS`) are kept as `Secret`, whose repr and str
never show the value; `describe()` lists the channels with those values hidden, for logs and
`signoff channels list`. The name `inbox` is the web inbox itself and cannot be configured.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

from .. import plugins
from ..destinations import Destinations
from ..destinations.masking import shown_url
from ..errors import ConfigError
from .contract import Channel
from .texts import LOCALES, Locale

INBOX = "inbox"
"""The web inbox: always there, needs no outbox row (its cards are live)."""
ENV_FILE = "SIGNOFF_CHANNELS"
NAME = re.compile(r"^[a-z][a-z0-9_-]{0,62}$")
SECRET_WORDS = ("secret", "token", "password", "key", "aes")


class Secret:
    """A configured secret: `reveal()` gives it; repr, str and logs never do."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


@dataclass(frozen=True, kw_only=True)
class ChannelConfig:
    """One channel's configuration: what a kind's `from_config` gets."""

    name: str
    kind: str
    locale: Locale = "en"
    timeout: float = 10.0
    concurrency: int = 8
    settings: dict[str, Any] = field(default_factory=dict)
    """The kind's own settings; secrets among them are `Secret`."""
    destinations: Destinations = field(default_factory=Destinations)
    """Where the channel may POST to a URL its settings name (the text channel's `send_url`):
    the server's `--allow-private-webhooks`, not a setting of the file."""

    def setting(self, key: str, default: Any = None) -> Any:
        return self.settings.get(key, default)

    def required(self, key: str) -> Any:
        if key not in self.settings or self.settings[key] in (None, ""):
            raise ConfigError(f"channel {self.name!r} ({self.kind}) needs the setting {key!r}")
        return self.settings[key]

    def secret(self, key: str) -> str:
        """A required secret's value."""
        value = self.required(key)
        return value.reveal() if isinstance(value, Secret) else str(value)

    def described(self) -> dict[str, Any]:
        """The configuration with secrets shown as '***', and credentials inside URLs too."""
        shown = {key: _shown(key, value) for key, value in self.settings.items()}
        return {"name": self.name, "kind": self.kind, "locale": self.locale, **shown}


class ChannelFactory(Protocol):
    def from_config(self, config: ChannelConfig) -> Channel: ...


class ChannelRegistry:
    """The channels a server uses, by name: those of its channels file (or added in code), and
    those an admin added to the store, which `following.ChannelFollower` keeps as the store has
    them (`set_stored`). A name the file uses is the file's."""

    def __init__(
        self,
        channels: Mapping[str, Channel] | None = None,
        configs: Mapping[str, ChannelConfig] | None = None,
    ) -> None:
        self._channels = dict(channels or {})
        self._configs = dict(configs or {})
        self._stored: dict[str, Channel] = {}
        self._stored_configs: dict[str, ChannelConfig] = {}
        self.unusable: dict[str, str] = {}
        """Stored channels this server does not use, and why: disabled, or it cannot build them
        (a secret its key does not open, a kind whose extra is not installed)."""
        self.stored_version = -1
        """The store's `channels_version` the stored channels were built at (-1: never read)."""

    @classmethod
    def from_configs(cls, configs: Mapping[str, ChannelConfig]) -> ChannelRegistry:
        return cls({name: build_channel(config) for name, config in configs.items()}, configs)

    @classmethod
    def load(
        cls, path: str | Path | None = None, *, destinations: Destinations | None = None
    ) -> ChannelRegistry:
        """The channels of `path`, else of the file `SIGNOFF_CHANNELS` names, else none;
        `destinations`: where they may POST to URLs of their settings (public ones by default)."""
        chosen = path or os.environ.get(ENV_FILE)
        if not chosen:
            return cls()
        return cls.from_configs(read_config(Path(chosen), destinations=destinations))

    def add(self, channel: Channel, config: ChannelConfig | None = None) -> None:
        """Add a channel built in code (tests, an embedding application)."""
        check_name(channel.name)
        self._channels[channel.name] = channel
        if config is not None:
            self._configs[channel.name] = config

    def set_stored(
        self,
        version: int,
        channels: Mapping[str, tuple[Channel, ChannelConfig]],
        unusable: Mapping[str, str],
    ) -> None:
        """The stored channels as built at the store's `version` (each swapped in whole, so a
        reader sees the old set or the new one)."""
        self._stored_configs = {name: config for name, (_, config) in channels.items()}
        self._stored = {name: channel for name, (channel, _) in channels.items()}
        self.unusable = dict(unusable)
        self.stored_version = version

    def get(self, name: str) -> Channel | None:
        return self._channels.get(name) or self._stored.get(name)

    def why_not(self, name: str) -> str:
        """Why `get(name)` has no channel: disabled, unusable here, or none by that name."""
        return self.unusable.get(name, f"no channel named {name!r} is configured")

    def __contains__(self, name: object) -> bool:
        return name in self._channels or name in self._stored

    def __iter__(self) -> Iterator[Channel]:
        return iter([*self._channels.values(), *self._stored.values()])

    def __len__(self) -> int:
        return len(self._channels) + len(self._stored)

    def config_of(self, name: str) -> ChannelConfig | None:
        return self._configs.get(name) or self._stored_configs.get(name)

    def source_of(self, name: str) -> str | None:
        """`file` (the channels file, or code), `store` (an admin added it), or None."""
        if name in self._channels:
            return "file"
        return "store" if name in self._stored or name in self.unusable else None

    def file_names(self) -> list[str]:
        return sorted(self._channels)

    def names(self) -> list[str]:
        return sorted({*self._channels, *self._stored})

    def describe(self) -> list[dict[str, Any]]:
        """Each channel's configuration, secrets hidden."""
        described = []
        for name in self.names():
            config = self.config_of(name)
            channel = self.get(name)
            assert channel is not None
            described.append(config.described() if config else {"name": name, "kind": channel.kind})
        return described

    async def close(self) -> None:
        for channel in self:
            await channel.close()


def _shown(key: str, value: Any) -> Any:
    if isinstance(value, Secret):
        return "***"
    if isinstance(value, str) and key.lower().endswith("url"):
        return shown_url(value)
    return value


def check_name(name: str) -> str:
    if not isinstance(name, str) or not NAME.match(name):
        raise ConfigError(
            f"channel name {name!r}: use lower-case letters, digits, '-' and '_', starting with a letter"
        )
    if name == INBOX:
        raise ConfigError("the channel name 'inbox' is the web inbox's own")
    return name


def kinds() -> list[str]:
    """The channel kinds installed: each registered under the entry-point group
    `signoff.channels` (signoff's own too), its class imported only when a channel of it is built,
    so that `import signoff` never imports a platform's library."""
    return plugins.names(plugins.CHANNELS)


def build_channel(config: ChannelConfig) -> Channel:
    known = kinds()
    if config.kind not in known:
        raise ConfigError(
            f"channel {config.name!r}: unknown kind {config.kind!r} (known: {', '.join(known)})"
        )
    factory = plugins.load(plugins.CHANNELS, config.kind, what=f"channel {config.name!r} ({config.kind})")
    if not callable(getattr(factory, "from_config", None)):
        raise ConfigError(f"channel {config.name!r}: the {config.kind} plugin is not a channel class")
    channel = cast(ChannelFactory, factory).from_config(config)
    if not isinstance(channel, Channel):
        raise ConfigError(f"channel {config.name!r}: the {config.kind} plugin built no Channel")
    channel.name = config.name
    channel.timeout = config.timeout
    channel.concurrency = config.concurrency
    return channel


def read_config(path: Path, *, destinations: Destinations | None = None) -> dict[str, ChannelConfig]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read the channels file {path}: {exc}") from None
    return parse_config(data, where=str(path), destinations=destinations)


def parse_config(
    data: Any,
    *,
    where: str = "the channels config",
    env: Mapping[str, str] | None = None,
    destinations: Destinations | None = None,
) -> dict[str, ChannelConfig]:
    """`{"channels": {name: {...}}}` (or the inner mapping) as checked `ChannelConfig`s."""
    environ = os.environ if env is None else env
    if isinstance(data, dict) and "channels" in data:
        data = data["channels"]
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping of channel names to settings")
    configs = {}
    for name, entry in data.items():
        check_name(name)
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}: channel {name!r} needs a mapping of settings")
        values = {key: _value(name, key, value, environ) for key, value in entry.items()}
        kind = str(values.pop("kind", name))
        locale, timeout, concurrency = checked_common(
            name, values.pop("locale", "en"), values.pop("timeout", 10.0), values.pop("concurrency", 8)
        )
        configs[name] = ChannelConfig(
            name=name,
            kind=kind,
            locale=locale,
            timeout=timeout,
            concurrency=concurrency,
            settings=values,
            destinations=destinations or Destinations(),
        )
    return configs


def checked_common(name: str, locale: Any, timeout: Any, concurrency: Any) -> tuple[Locale, float, int]:
    """The settings every channel has, checked: its locale, its timeout per send (seconds, more
    than 0) and how many sends may be under way at once (at least 1)."""
    if locale not in LOCALES:
        raise ConfigError(f"channel {name!r}: locale must be one of {', '.join(LOCALES)}")
    try:
        seconds = float(timeout)
        at_once = int(concurrency)
    except (TypeError, ValueError):
        raise ConfigError(f"channel {name!r}: timeout and concurrency must be numbers") from None
    if not math.isfinite(seconds) or seconds <= 0 or at_once < 1:
        raise ConfigError(f"channel {name!r}: timeout must be > 0 and concurrency >= 1")
    return cast(Locale, locale), seconds, at_once


def _value(channel: str, key: str, value: Any, environ: Mapping[str, str]) -> Any:
    if isinstance(value, dict) and set(value) == {"env"}:
        variable = str(value["env"])
        if variable not in environ:
            raise ConfigError(
                f"channel {channel!r}: {key} names the environment variable {variable}, which is not set"
            )
        value = environ[variable]
    if isinstance(value, str) and any(word in key.lower() for word in SECRET_WORDS):
        return Secret(value)
    return value
