"""Channels kept in the store (added by an admin in the inbox, the API or the CLI), beside those
of a server's channels file: `StoredChannel`, and the `ChannelConfig` a server builds it from.

Its plain settings are kept as given; its secrets sealed (`sealing`), never shown: `to_dict`
says only which are set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..destinations import Destinations
from ..destinations.masking import shown_url
from ..errors import ConfigError
from .sealing import NO_KEY, SecretsKey
from .texts import Locale

if TYPE_CHECKING:
    from .registry import ChannelConfig

SET = "set"
"""How a secret that is set is shown (its value never is)."""


@dataclass(frozen=True, kw_only=True)
class StoredChannel:
    name: str
    kind: str
    locale: Locale = "en"
    timeout: float = 10.0
    concurrency: int = 8
    settings: dict[str, Any] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)
    """Setting → its sealed value. Never shown: see `to_dict`."""
    disabled: bool = False
    version: int = 1
    """Grows with each change: an edit names the version it started from."""
    created_at: datetime | None = None
    created_by: str | None = None
    updated_at: datetime | None = None
    updated_by: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """As the API, the CLI, the pages and the audit log show it: which secrets are set, never
        their values; credentials inside URLs hidden."""
        return {
            "name": self.name,
            "kind": self.kind,
            "locale": self.locale,
            "timeout": self.timeout,
            "concurrency": self.concurrency,
            "settings": shown_settings(self.settings),
            "secrets": dict.fromkeys(sorted(self.secrets), SET),
            "disabled": self.disabled,
            "version": self.version,
            "created_at": self.created_at.isoformat() if self.created_at else None,
            "created_by": self.created_by,
            "updated_at": self.updated_at.isoformat() if self.updated_at else None,
            "updated_by": self.updated_by,
        }

    def config(self, key: SecretsKey | None, destinations: Destinations | None = None) -> ChannelConfig:
        """What its kind's class is built from, the secrets opened with `key` (ConfigError when
        there is none, or it does not open them)."""
        from .registry import ChannelConfig, Secret  # every channel kind's registry: for a server

        opened: dict[str, Any] = {}
        for setting, sealed in self.secrets.items():
            if key is None:
                raise ConfigError(f"channel {self.name!r} has secrets, and {NO_KEY}")
            opened[setting] = Secret(key.open(self.name, setting, sealed))
        return ChannelConfig(
            name=self.name,
            kind=self.kind,
            locale=self.locale,
            timeout=self.timeout,
            concurrency=self.concurrency,
            settings={**self.settings, **opened},
            destinations=destinations or Destinations(),
        )

    def __repr__(self) -> str:
        return f"StoredChannel(name={self.name!r}, kind={self.kind!r}, version={self.version})"


def stored_channel(row: dict[str, Any]) -> StoredChannel:
    return StoredChannel(
        name=row["name"],
        kind=row["kind"],
        locale=row["locale"],
        timeout=float(row["timeout"]),
        concurrency=int(row["concurrency"]),
        settings=dict(row["settings"]),
        secrets=dict(row["secrets"]),
        disabled=bool(row["disabled"]),
        version=int(row["version"]),
        created_at=row["created_at"],
        created_by=row["created_by"],
        updated_at=row["updated_at"],
        updated_by=row["updated_by"],
    )


def shown_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """Plain settings as people see them: credentials inside URLs hidden (`masking`)."""
    return {
        key: shown_url(value) if isinstance(value, str) and key.lower().endswith("url") else value
        for key, value in sorted(settings.items())
    }
