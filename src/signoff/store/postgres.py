"""The PostgreSQL store: psycopg 3 with a connection pool; for several replicas sharing the work.

A change to a request sends `NOTIFY signoff_requests, '<id>\t<creator>'` from a trigger
(delivered on commit), followed by a tab and the row as JSON when the request has ended and fits
(`notified`): its waiters resume on that row, unread. One listening connection per process wakes
the local waiters, and tells the event feed whose request changed (it reads only what its
followers may see). NOTIFY is only a hint, so waiters' requests are also re-read every
`FALLBACK_POLL` seconds, in one query. When the listening connection is lost (its backend
terminated, the server restarted) it is opened again, and every waiter looks again:
notifications sent meanwhile reached nobody.

Connections die (a database restart, a failover, `pg_terminate_backend`, a proxy's idle
timeout) and that must not fail calls:

- every connection is checked as it leaves the pool: if the server sent anything while it sat
  idle (a terminated backend's last words, the socket's end), an empty query tells whether it
  still works (looking costs a system call; the query, a round trip, only runs then). One that
  fails is discarded, and so is every other idle connection that fails then (they usually die
  together), so the caller gets a fresh connection at once instead of after the pool's backoff.
  A connection that died silently (a host gone without a word) is found at its next statement;
- a read whose connection is lost mid-statement is run again on another connection: reads
  change nothing, and each statement of `_read` runs on its own (autocommit), so running it
  again is the same as running it later;
- a write is never run again once sent. If its connection is lost before the commit, the
  transaction was rolled back by the server and the caller gets `StoreUnavailable` (nothing was
  changed: it may try again); if lost during the commit, whether it was made is not known, and
  `StoreUnavailable` says so (a retry must be idempotent: keys, compare-and-set).

Driver errors never leave the store: they become `StoreUnavailable` or `StoreError`
(see `failures`).
"""

from __future__ import annotations

import logging
import select
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .._util import new_id, utcnow
from ..decisions import Decision
from ..errors import InvalidInput, MigrationError, RequestNotFound, StoreError
from ..execution import Claim
from ..requests import ExecutionStatus, Request
from .base import Store
from .core import AuditNote, BackgroundThread, Tx
from .decide_statement import decide_params, fits_one_statement
from .execution_ops import claim_of
from .failures import postgres_error
from .notified import notified
from .postgres_tx import Connection, PostgresReads, PostgresTx, RowCount
from .queries import load_queries, migration_files
from .wakeup import ANY, WakeupHub

try:
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import conninfo_to_dict
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("PostgreSQL support needs the extra: pip install 'signoff[postgres]'") from exc

log = logging.getLogger("signoff.store")
CHANNEL = "signoff_requests"
APPLICATION_NAME = "signoff"
"""What signoff's connections call themselves in `pg_stat_activity`, unless the DSN names one."""
LISTENER_NAME = "signoff-listen"
"""The listening connection's `application_name` (in pg_stat_activity)."""
FALLBACK_POLL = 2.0
RECONNECT_SECONDS = 1.0
"""Wait between attempts to open the listening connection while PostgreSQL refuses it."""
DECIDED_AMONG = (
    "SELECT id, created_by FROM requests WHERE id = ANY(%s) AND status NOT IN ('pending', 'drafting')"
)
_MIGRATION_LOCK = zlib.crc32(b"signoff-migrations")


class PostgresStore(Store):
    """`PostgresStore("postgresql://user@host/db")`; `schema=` keeps signoff's tables in their own schema."""

    seals_at_commit = False

    def __init__(
        self,
        dsn: str,
        *,
        schema: str | None = None,
        min_size: int = 1,
        max_size: int = 10,
        migrate: bool = True,
    ) -> None:
        self.url = dsn
        self.schema = schema
        self.hub = WakeupHub()
        self.rows_read = RowCount()
        """Rows this store's statements returned: what a replica reads, counted."""
        self._queries = load_queries("postgres")
        self._kwargs: dict[str, Any] = {"row_factory": dict_row, "autocommit": True}
        if schema:
            self._kwargs["options"] = f"-c search_path={schema}"
        try:
            if "application_name" not in conninfo_to_dict(dsn):
                self._kwargs["application_name"] = APPLICATION_NAME
            if schema and migrate:
                self._create_schema(dsn, schema)
            self._pool: ConnectionPool[Connection] = ConnectionPool(
                dsn,
                min_size=min_size,
                max_size=max_size,
                kwargs=self._kwargs,
                open=True,
                name="signoff",
                check=self._check_connection,
            )
            self._pool.wait(timeout=10)
        except psycopg.Error as exc:
            raise postgres_error(exc, "cannot connect to PostgreSQL") from None
        except Exception as exc:  # anything else the pool raises
            raise StoreError(f"cannot connect to PostgreSQL: {exc}") from None
        self._source: BackgroundThread | None = None
        self._source_lock = threading.Lock()
        self._closed = False
        if migrate:
            self.migrate()

    @staticmethod
    def _create_schema(dsn: str, schema: str) -> None:
        with psycopg.connect(dsn, autocommit=True) as connection:
            connection.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))

    def _check_connection(self, connection: Connection) -> None:
        """The pool's check of a connection it hands out (see the module's docstring). When one
        has died, the others idle in the pool usually died with it (a restart,
        `pg_terminate_backend`): they are all checked now, so that the caller's next try gets a
        new connection, not another corpse."""
        if not connection.closed and not select.select([connection.fileno()], [], [], 0)[0]:
            return  # nothing arrived while it was idle
        try:
            ConnectionPool.check_connection(connection)
        except psycopg.Error:
            log.info("a pooled PostgreSQL connection was dead; checking the idle ones")
            self._pool.check()
            raise

    # -- transactions -------------------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[PostgresTx]:
        self._ensure_open()
        # The pool's connections are in autocommit mode: reads cost one round trip, and writes
        # open an explicit transaction. Other processes learn of changes from the requests_notify
        # trigger.
        committing = False
        try:
            with self._pool.connection() as connection, connection.transaction():
                yield PostgresTx(connection, self._queries, self.rows_read)
                committing = True
        except psycopg.Error as exc:
            raise postgres_error(exc, "the write failed", commit_unknown=committing) from exc

    @contextmanager
    def _read(self) -> Iterator[PostgresTx]:
        self._ensure_open()
        reads = PostgresReads(self._pool, self._queries, self.rows_read)
        try:
            yield reads
        except psycopg.Error as exc:
            raise postgres_error(exc, "the read failed") from exc
        finally:
            reads.release()

    def _insert_request_audited(
        self, params: dict[str, Any], approvers: list[str], note: AuditNote
    ) -> dict[str, Any] | None:
        row = self._fused("insert_request_audited", {**params, "approvers": approvers, **note.params()})
        if row is not None:
            self.hub.fire((row["id"],), {row["id"]: row["created_by"]})
        return row

    def _finish_request_audited(
        self, params: dict[str, Any], note: AuditNote, *, notified: bool = True
    ) -> dict[str, Any] | None:
        # the fused statement writes the outbox's rows in the same round trip, whoever they are for
        row = self._fused("finish_request_audited", {**params, **note.params()})
        if row is not None:
            self.hub.fire((row["id"],), {row["id"]: row["created_by"]})
        return row

    def _decide_at_once(
        self, request_id: str, decision: Decision, *, actor: str, channel: str, on_behalf: bool
    ) -> tuple[bool, Request] | None:
        if not fits_one_statement(decision):
            return None
        try:
            params = decide_params(
                request_id,
                decision,
                decision_id=new_id("dec"),
                actor=actor,
                channel=channel,
                on_behalf=on_behalf,
                now=utcnow(),
            )
        except InvalidInput:  # a value JSON cannot hold: refused by the checked path, in its order
            return None
        row = self._fused("decide_at_once", params)
        if row is None:
            raise RequestNotFound(f"no request with id {request_id!r}")
        if not row["decided_at_once"]:
            return False, self._with_approvals_read(row)
        self.hub.fire((row["id"],), {row["id"]: row["created_by"]})
        return True, self._request(row)

    def _reclaim(
        self, tx: Tx, params: dict[str, Any], from_status: ExecutionStatus, note: AuditNote
    ) -> Claim:
        row = tx.one("reclaim_execution_audited", **{**params, **note.params(), "from_status": from_status})
        return claim_of(params["request_id"], row)

    def _with_approvals_read(self, row: dict[str, Any]) -> Request:
        """The request of a row, with a quorum's approvals as `get_request` reads them."""
        with self._read() as tx:
            return self._with_approvals(tx, row)

    def _fused(self, query: str, params: dict[str, Any]) -> dict[str, Any] | None:
        """One statement in autocommit: its own transaction, one round trip. Not run again if
        its connection is lost: it may have committed."""
        self._ensure_open()
        try:
            with self._pool.connection() as connection:
                try:
                    return PostgresTx(connection, self._queries, self.rows_read).one(query, **params)
                except psycopg.Error as exc:
                    # An error the server sent back means the statement failed; a lost connection
                    # leaves its commit unknown.
                    raise postgres_error(exc, "the write failed", commit_unknown=connection.closed) from exc
        except psycopg.Error as exc:  # no connection could be had
            raise postgres_error(exc, "the write failed") from exc

    def _ensure_open(self) -> None:
        if self._closed:
            raise StoreError("the store is closed")

    # -- migrations ---------------------------------------------------------------------------

    def migrate(self) -> list[str]:
        try:
            return self._migrate()
        except psycopg.Error as exc:
            raise postgres_error(exc, "cannot migrate the database") from exc

    def _migrate(self) -> list[str]:
        applied: list[str] = []
        with self._pool.connection() as connection, connection.transaction():
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            connection.execute(
                "CREATE TABLE IF NOT EXISTS signoff_migrations "
                "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL)"
            )
            done = {row["version"] for row in connection.execute("SELECT version FROM signoff_migrations")}
            for version, name, script in migration_files("postgres"):
                if version in done:
                    continue
                try:
                    with connection.transaction():
                        connection.execute(script.encode())
                        connection.execute(
                            "INSERT INTO signoff_migrations (version, name, applied_at) VALUES (%s, %s, %s)",
                            (version, name, utcnow()),
                        )
                except psycopg.Error as exc:
                    raise MigrationError(f"migration {name} failed: {exc}") from None
                applied.append(name)
        return applied

    # -- cross-process wake-ups ---------------------------------------------------------------

    def _start_wakeup_source(self) -> None:
        if self._source is None:
            with self._source_lock:
                if self._source is None and not self._closed:
                    self._source = BackgroundThread("signoff-pg-listen", self._listen)

    def _listen(self, stop: threading.Event) -> None:
        failures = 0
        while not stop.is_set():
            try:
                options = {**self._kwargs, "application_name": LISTENER_NAME}
                with psycopg.connect(self.url, **options) as connection:
                    connection.execute(sql.SQL("LISTEN {}").format(sql.Identifier(CHANNEL)))
                    failures = 0
                    # Notifications sent while nobody listened are lost: every waiter looks again.
                    self.hub.fire([ANY, *self.hub.watched()])
                    self._relay(connection, stop)
            except psycopg.Error as exc:
                if stop.is_set():
                    return
                failures += 1
                report = log.warning if failures == 1 else log.debug
                report("the PostgreSQL listening connection failed (%s); opening it again", exc)
                if failures > 1 and stop.wait(RECONNECT_SECONDS):
                    return
            except Exception:  # a fault in relaying must not end every waiter's wake-ups for good
                if stop.is_set():
                    return
                log.exception("the PostgreSQL listener failed; listening again")
                if stop.wait(RECONNECT_SECONDS):
                    return

    def _relay(self, connection: psycopg.Connection[dict[str, Any]], stop: threading.Event) -> None:
        last_poll = time.monotonic()
        while not stop.is_set():
            for notify in connection.notifies(timeout=0.5):
                request_id, creator, ended = notified(notify.payload)
                self.hub.fire((request_id,), {request_id: creator} if creator else None, ended)
            if time.monotonic() - last_poll >= FALLBACK_POLL:
                last_poll = time.monotonic()
                watched = self.hub.watched()
                if watched:
                    rows = connection.execute(DECIDED_AMONG, (watched,)).fetchall()
                    self.rows_read.add("decided_among", len(rows))
                    self.hub.fire([row["id"] for row in rows], {row["id"]: row["created_by"] for row in rows})

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._source is not None:
            self._source.stop()
        self._pool.close()
