"""What every command shares: the database chosen by `--db`, the acting user, and input errors."""

from __future__ import annotations

from dataclasses import dataclass, field

import typer

from .._util import os_user
from ..store import Store, open_store


class CliError(Exception):
    """A command that cannot do what was asked (e.g. nothing by that name): exit 1."""

    exit_code = 1


class CliInputError(CliError):
    """Malformed input on the command line (bad JSON, a malformed `--set`): exit 2, like usage errors."""

    exit_code = 2


@dataclass
class CliState:
    db_url: str | None = None
    _store: Store | None = field(default=None, repr=False)

    def store(self) -> Store:
        if self._store is None:
            self._store = open_store(self.db_url)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


def state_of(ctx: typer.Context) -> CliState:
    """The state the root command set up (or a new one, when a sub-command runs on its own)."""
    state = ctx.find_object(CliState)
    if state is None:
        state = ctx.ensure_object(CliState)
        ctx.call_on_close(state.close)
    return state


def store_of(ctx: typer.Context) -> Store:
    return state_of(ctx).store()


def acting_user(as_user: str | None) -> str:
    return as_user.strip() if as_user and as_user.strip() else os_user()
