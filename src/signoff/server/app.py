"""The signoff server: REST API v1, the live event stream, the web inbox, metrics.

    app = create_app(open_store("sqlite:///signoff.db"))
    uvicorn.run(app, host="127.0.0.1", port=8765)

The server owns the sweeper: every `sweep_interval` seconds it expires what is past its deadline
and marks in doubt the executions whose process stopped while running the tool, and abandoned the
approved calls whose waiting process stopped before running them (safe on several replicas:
PostgreSQL skips rows another replica holds); it also brings the channels admins keep in the
store up to date (`channels.following`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

from fastapi import FastAPI
from fastapi.responses import PlainTextResponse
from fastapi.telemetry import TelemetryConfig
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.responses import Response

from .. import __version__
from .._util import utcnow
from ..channels.registry import ChannelRegistry
from ..errors import StoreUnavailable
from ..outbox.worker import DeliveryWorker
from ..store import Store
from . import agui, channel_routes, health
from .access import CallerCache
from .api import (
    agents,
    audit,
    batch,
    channel_admin,
    executions,
    grants,
    identity,
    people,
    requests,
    rules,
    run_states,
    shadow_rules,
)
from .api import channels as channel_api
from .api.rule_history import router as rule_history_router
from .context import Server, ServerSettings
from .daily_purge import day_of, purge_failed, run_daily_purge
from .docs import install_docs
from .errors import install_error_handlers
from .events import EventFeed
from .limits import Door
from .metrics import Metrics
from .routing import add_routes
from .sealer import run_sealer

log = logging.getLogger("signoff.server")
PURGE_EVERY = timedelta(hours=1)
NO_TELEMETRY: TelemetryConfig = {"tracing": False, "metrics": False, "logs": False, "operation_spans": False}
"""FastAPI's own OpenTelemetry wrapper costs on every request; signoff exports its metrics at
/metrics and has no tracer configured."""


def create_app(
    store: Store,
    settings: ServerSettings | None = None,
    *,
    inbox: bool = True,
    channels: ChannelRegistry | None = None,
) -> FastAPI:
    settings = settings or ServerSettings()
    metrics = Metrics(store)
    feed = EventFeed(store, on_decided=metrics.observe_decision)
    server = Server(
        store=store,
        settings=settings,
        feed=feed,
        metrics=metrics,
        callers=CallerCache(),
        channels=channels if channels is not None else ChannelRegistry(),
    )
    worker = DeliveryWorker(
        store,
        server.channels,
        settings.outbox,
        base_url=settings.base_url,
        destinations=settings.destinations,
        follow=server.follow_channels,
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await feed.start()
        try:
            await asyncio.to_thread(server.follow_channels)
        except StoreUnavailable as exc:  # the sweep keeps trying
            log.warning("the channels kept in the store cannot be read yet (%s)", exc.message)
        sweeper = asyncio.create_task(_sweep(server), name="signoff-sweeper")
        sealer = (
            None
            if store.seals_at_commit
            else asyncio.create_task(run_sealer(server, settings.seal_interval), name="signoff-sealer")
        )
        if settings.outbox.enabled:
            await worker.start()
        try:
            yield
        finally:
            if settings.outbox.enabled:
                await worker.stop()
            await server.channels.close()
            await server.follower.close()
            for task in (sweeper, sealer):
                if task is not None:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
            await feed.stop()
            server.close()

    app = FastAPI(
        title="signoff",
        version=__version__,
        summary="The human approval layer for AI agents' tool calls.",
        lifespan=lifespan,
        telemetry=NO_TELEMETRY,
        docs_url=None,  # served by `docs`, from the package rather than a CDN
        redoc_url=None,
        swagger_ui_oauth2_redirect_url=None,
    )
    app.state.server = server
    if settings.oidc is not None:
        from .oidc.client import OidcClient

        app.state.oidc_client = OidcClient(settings.oidc, settings.base_url)
    app.state.outbox = worker
    app.add_middleware(Door, max_body=settings.max_body)
    install_error_handlers(app)
    for module in (
        batch,
        requests,
        agents,
        executions,
        shadow_rules,  # before `rules`: its /v1/rules/{kind}/{name} would take /v1/rules/shadow/{id}
        rules,
        audit,
        identity,
        people,
        run_states,
        channel_api,
        channel_admin,
        grants,
    ):
        add_routes(app, module.router)
    add_routes(app, executions.per_request)
    add_routes(app, rule_history_router)
    add_routes(app, health.router)
    add_routes(app, agui.router)
    add_routes(app, channel_routes.router)
    install_docs(app)

    @app.get("/metrics", tags=["meta"], summary="Prometheus metrics", response_class=PlainTextResponse)
    def prometheus() -> Response:
        return Response(metrics.render(), media_type=CONTENT_TYPE_LATEST)

    if inbox:
        from .inbox import install_inbox

        install_inbox(app)
    return app


async def _sweep(server: Server) -> None:
    store = server.store
    next_purge = 0.0
    daily_purge_asked = -1
    """The day this replica last asked to run the daily purge."""
    purging: asyncio.Task[object] | None = None
    """The daily purge, while it runs (beside the sweep, which it must not hold up)."""
    loop = asyncio.get_running_loop()
    unavailable: str | None = None
    """Why the store could not be used at the last sweep: said once, not every interval."""
    while True:
        try:
            expired = await asyncio.to_thread(store.expire_due)
            if expired:
                log.info("expired %d request(s) past their deadline", len(expired))
            stepped = await asyncio.to_thread(store.run_due_steps)
            if stepped:
                log.info("ran %d reminder and escalation step(s)", len(stepped))
            doubtful = await asyncio.to_thread(store.mark_dead_executions)
            if doubtful:
                log.warning(
                    "%d execution(s) in doubt: their process stopped while running the tool (%s); "
                    "a person must check and then `signoff rerun ID` or leave them",
                    len(doubtful),
                    ", ".join(execution.request_id for execution in doubtful),
                )
            abandoned = await asyncio.to_thread(store.mark_abandoned_executions)
            if abandoned:
                log.warning(
                    "%d approved call(s) abandoned: the process waiting to run them stopped before it "
                    "did (%s); nothing ran; a replay of the call runs it",
                    len(abandoned),
                    ", ".join(execution.request_id for execution in abandoned),
                )
            if loop.time() >= next_purge:
                await asyncio.to_thread(store.purge_credentials)
                await asyncio.to_thread(store.purge_kept_answers, ttl=server.settings.idempotency_ttl)
                next_purge = loop.time() + PURGE_EVERY.total_seconds()
            daily = server.settings.purge
            if daily is not None and day_of(now := utcnow()) != daily_purge_asked and purging is None:
                daily_purge_asked = day_of(now)
                purging = asyncio.create_task(asyncio.to_thread(run_daily_purge, store, daily, now))
            if purging is not None and purging.done():
                purge_failed(purging)
                purging = None
            await asyncio.to_thread(server.follow_channels)
            await server.follower.close_retired()
        except StoreUnavailable as exc:
            if exc.message != unavailable:
                log.warning("the sweep cannot use the store (%s); trying again until it can", exc.message)
                unavailable = exc.message
        except Exception:
            log.exception("the sweep failed; trying again")
        else:
            if unavailable is not None:
                log.warning("the sweep can use the store again")
                unavailable = None
        await asyncio.sleep(server.settings.sweep_interval)
