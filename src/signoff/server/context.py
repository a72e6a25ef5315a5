"""What every route of one server shares: the store, the settings, the event feed, metrics."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from fastapi import Request as HttpRequest

from ..channels.following import ChannelFollower
from ..channels.registry import ChannelRegistry
from ..channels.sealing import SecretsKey
from ..destinations import Destinations
from ..outbox.settings import OutboxSettings
from ..retention import DailyPurge
from ..rules.resolve import Resolver
from ..store import Store
from ..token_lifetimes import TokenLifetimes
from .declared import DeclaredRules
from .disk_health import MinFreeDisk
from .grouping import GroupedWriter
from .limits import MAX_BODY
from .oidc.settings import OidcSettings
from .refusals import SignInRefusals
from .request_rules import AgentRules
from .sign_in_limit import SignInLimit, SignInLimiter

if TYPE_CHECKING:
    from .access import CallerCache
    from .events import EventFeed
    from .metrics import Metrics


T = TypeVar("T")
STORE_THREADS = 32


@dataclass(frozen=True, kw_only=True)
class ServerSettings:
    base_url: str = "http://127.0.0.1:8765"
    """How people reach this server: the start of every link it prints or mails."""
    sweep_interval: float = 1.0
    seal_interval: float = 0.2
    """How often queued audit entries are sealed into the chain (PostgreSQL; SQLite seals at commit)."""
    session_ttl: timedelta = timedelta(hours=12)
    """The longest a web session lives, however it was started (`--session-max-age`)."""
    login_ttl: timedelta = timedelta(hours=24)
    handle_ttl: timedelta = timedelta(hours=24)
    secure_cookies: bool = False
    """Mark cookies Secure (serve over HTTPS)."""
    agent_rules: AgentRules = "allow"
    """Whether an agent's own rule sets who decides, the quorum, the deadline, on_expire and
    unattended handling of a tool the server's rules do not cover (see `request_rules`)."""
    max_body: int = MAX_BODY
    """The largest request body accepted, in bytes (413 beyond)."""
    idempotency_ttl: timedelta = timedelta(hours=24)
    """How long an `Idempotency-Key` keeps its answer."""
    outbox: OutboxSettings = field(default_factory=OutboxSettings)
    """The delivery worker's settings (see `signoff.outbox`)."""
    min_free_disk: MinFreeDisk = field(default_factory=MinFreeDisk)
    """The free space the database's disk must have for `/healthz` to answer 200 (100 MiB;
    `MinFreeDisk.parse("1%")` for a share of the disk; see `disk_health`)."""
    destinations: Destinations = field(default_factory=Destinations)
    """Where webhooks may be added and delivered to: public addresses only, unless
    `Destinations(allow_private=True)` (`--allow-private-webhooks`; see `signoff.destinations`)."""
    tokens: TokenLifetimes = field(default_factory=TokenLifetimes)
    """The default and the longest lifetime of an API token made through the API."""
    sign_in_limit: SignInLimit = field(default_factory=SignInLimit)
    """How many failed sign-ins a source address may make in a window (see `sign_in_limit`)."""
    wait_recheck: float = 5.0
    """A long-poll (`GET /v1/requests/{id}/wait`) is woken by the change itself; it also reads
    its request again this often, in case a wake-up from another process was lost."""
    secrets_key: SecretsKey | None = None
    """The key that seals the secrets of channels admins add (`--secrets-key-file`; see
    `channels.sealing`): without one, such a channel with secrets cannot be added or used."""
    oidc: OidcSettings | None = None
    """Sign people in through this OpenID Connect provider too (`--oidc-issuer`; see `server.oidc`)."""
    purge: DailyPurge | None = None
    """Purge daily what closed long enough ago (`--purge-older-than`; see `signoff.retention`)."""


@dataclass(kw_only=True)
class Server:
    store: Store
    settings: ServerSettings
    feed: EventFeed
    metrics: Metrics
    callers: CallerCache
    _resolver: tuple[int, Resolver] | None = field(default=None)
    _pool: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(STORE_THREADS, thread_name_prefix="signoff-store")
    )
    _writer: GroupedWriter | None = field(default=None)
    sign_ins: SignInRefusals = field(default_factory=SignInRefusals)
    """Failed sign-ins, counted per source for the audit log (see `refusals`)."""
    limiter: SignInLimiter = field(init=False)
    """Failed sign-ins per source, against `settings.sign_in_limit` (see `sign_in_limit`)."""
    declared: DeclaredRules = field(default_factory=DeclaredRules)
    """Which rules declared in agents' code this process has noted (see `declared`)."""
    channels: ChannelRegistry = field(default_factory=ChannelRegistry)
    """The channels this server sends to and takes callbacks from, by name."""
    follower: ChannelFollower = field(init=False)
    """Keeps `channels` as the store has the channels admins add (see `channels.following`)."""

    def __post_init__(self) -> None:
        self.limiter = SignInLimiter(self.settings.sign_in_limit)
        if self.store.groups_writes:
            self._writer = GroupedWriter(self.store)
        self.follower = ChannelFollower(
            self.channels,
            self.store,
            key=self.settings.secrets_key,
            destinations=self.settings.destinations,
        )

    def follow_channels(self) -> bool:
        """Bring the channels up to the store's (a small read when nothing changed)."""
        return self.follower.follow()

    async def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Run a store call in the server's own threads: a plain executor costs less per call
        than Starlette's threadpool, which matters on the hottest endpoints."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, partial(fn, *args, **kwargs))

    async def write(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Run a store call that writes: on SQLite, in bursts that share one commit (see
        `grouping`); elsewhere like `run`."""
        if self._writer is None:
            return await self.run(fn, *args, **kwargs)
        result: T = await self._writer.run(fn, *args, **kwargs)
        return result

    def close(self) -> None:
        if self._writer is not None:
            self._writer.stop()
        self._pool.shutdown(wait=False)
        for entry in self.sign_ins.drain():
            entry.write(self.store)

    def resolver(self) -> Resolver:
        """The rules kept in the store, re-read when they change."""
        version = self.store.rules_version()
        cached = self._resolver
        if cached is None or cached[0] != version:
            cached = (version, Resolver(self.store.load_rules()))
            self._resolver = cached
        return cached[1]

    def link(self, path: str) -> str:
        return self.settings.base_url.rstrip("/") + path


def server_of(request: HttpRequest) -> Server:
    server: Server = request.app.state.server
    return server
