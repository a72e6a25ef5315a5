"""How long API tokens live: a default for a token made without a lifetime, and a maximum.

Every token made through the API (`POST /v1/tokens`, from a program or a web session) and the
CLI (`signoff tokens create`) expires: at the default lifetime unless it asks for less, never
later than the maximum. The server takes both from `signoff serve --token-ttl/--token-max-ttl`,
the CLI on a database from the same environment variables, `SIGNOFF_TOKEN_TTL` and
`SIGNOFF_TOKEN_MAX_TTL`. An expired token is refused like a revoked one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from ._util import format_duration, parse_duration
from .errors import ConfigError, InvalidInput

DEFAULT_TTL = timedelta(days=90)
MAX_TTL = timedelta(days=365)
TTL_ENV = "SIGNOFF_TOKEN_TTL"
MAX_TTL_ENV = "SIGNOFF_TOKEN_MAX_TTL"


@dataclass(frozen=True)
class TokenLifetimes:
    default: timedelta = DEFAULT_TTL
    maximum: timedelta = MAX_TTL

    def __post_init__(self) -> None:
        if self.default > self.maximum:
            raise ConfigError(
                f"a token's default lifetime ({format_duration(self.default)}) is longer than its "
                f"maximum ({format_duration(self.maximum)})"
            )

    @classmethod
    def parse(cls, default: str | None, maximum: str | None) -> TokenLifetimes:
        """From durations as people write them (`90d`, `12h`); None: the built-in one.
        ConfigError says which one is wrong."""
        values: dict[str, timedelta] = {}
        for field, text in (("default", default), ("maximum", maximum)):
            if text is None:
                continue
            try:
                values[field] = parse_duration(text)
            except ValueError as exc:
                raise ConfigError(f"the token {field} lifetime: {exc}") from None
        return cls(**values)

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> TokenLifetimes:
        return cls.parse(env.get(TTL_ENV) or None, env.get(MAX_TTL_ENV) or None)

    def lifetime(self, expires_in: str | float | None) -> timedelta:
        """The lifetime of a token asked to expire in `expires_in` (None: the default); a
        lifetime past the maximum is refused (InvalidInput), as is one that is no duration."""
        if expires_in is None:
            return self.default
        try:
            wanted = parse_duration(expires_in)
        except ValueError as exc:
            raise InvalidInput(f"expires_in: {exc}") from None
        if wanted > self.maximum:
            raise InvalidInput(
                f"expires_in: a token lives at most {format_duration(self.maximum)} here, not "
                f"{format_duration(wanted)} (the server's --token-max-ttl)"
            )
        return wanted
