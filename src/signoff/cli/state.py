"""What every command shares: where requests live (the database chosen by `--db`, or a server
when `SIGNOFF_URL` and `SIGNOFF_TOKEN` are set), the acting user, and input errors."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import typer

from .._util import os_user
from ..backends import Backing, open_backend
from ..environment import TOKEN_ENV, URL_ENV

if TYPE_CHECKING:
    from ..store import Store


class CliError(Exception):
    """A command that cannot do what was asked (e.g. nothing by that name): exit 1."""

    exit_code = 1


class CliInputError(CliError):
    """Malformed input on the command line (bad JSON, a malformed `--set`): exit 2, like usage errors."""

    exit_code = 2


@dataclass
class CliState:
    db_url: str | None = None
    server_url: str | None = None
    token: str | None = None
    _backing: Backing | None = field(default=None, repr=False)
    _me: str | None = field(default=None, repr=False)

    @property
    def remote(self) -> bool:
        return bool(self.server_url)

    def store(self) -> Backing:
        """The server's client when `SIGNOFF_URL` is set, else the local database."""
        if self._backing is None:
            if self.remote and not self.token:
                raise CliError(
                    f"{URL_ENV} is set, so the CLI talks to {self.server_url}: set {TOKEN_ENV} too"
                )
            self._backing = open_backend(
                None if self.remote else self.db_url, url=self.server_url, token=self.token
            )
        return self._backing

    def local_store(self, command: str) -> Store:
        """The local database, for commands the server's API does not offer."""
        if self.remote:
            raise CliError(
                f"`signoff {command}` works on a local database only; unset {URL_ENV} "
                f"(now {self.server_url}) and give --db"
            )
        backing = self.store()
        from ..store import Store

        assert isinstance(backing, Store)
        return backing

    def actor(self, as_user: str | None) -> str:
        """Who acts: `--as`, else the OS user; against a server, always the token's user."""
        wanted = as_user.strip() if as_user and as_user.strip() else None
        from ..store import Store

        backing = self.store()
        if isinstance(backing, Store):
            return wanted or os_user()
        if self._me is None:
            self._me = backing.me().name
        if wanted is not None and wanted != self._me:
            raise CliError(
                f"--as {wanted}: against a server you act as the user of your token ({self._me}); "
                f"use {wanted}'s own token instead"
            )
        return self._me

    def close(self) -> None:
        if self._backing is not None:
            self._backing.close()
            self._backing = None


def state_of(ctx: typer.Context) -> CliState:
    """The state the root command set up (or a new one, when a sub-command runs on its own)."""
    state = ctx.find_object(CliState)
    if state is None:
        state = ctx.ensure_object(CliState)
        ctx.call_on_close(state.close)
    return state


def store_of(ctx: typer.Context) -> Backing:
    return state_of(ctx).store()


def local_store_of(ctx: typer.Context, command: str) -> Store:
    return state_of(ctx).local_store(command)


def acting_user(ctx: typer.Context, as_user: str | None) -> str:
    return state_of(ctx).actor(as_user)
