"""The PostgreSQL store when its connections die under it (`pg_terminate_backend`, as in a
restart or a failover): the next calls succeed, a read in flight is read again, and what
cannot be saved is a signoff error, never a `psycopg` one."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from signoff import Approve, RequestStatus, StoreUnavailable
from signoff.store.postgres import PostgresStore

from .faults.pg import tagged_dsn, terminate_backends
from .test_store_grouped import pending
from .test_store_requests import new_request


@pytest.fixture
def tagged(pg_schema: str) -> Iterator[tuple[PostgresStore, str]]:
    dsn, name = tagged_dsn()
    store = PostgresStore(dsn, schema=pg_schema, max_size=4)
    yield store, name
    store.close()


def fill_the_pool(store: PostgresStore, size: int = 4) -> None:
    """Make the pool hold `size` idle connections."""
    barrier = threading.Barrier(size)

    def read() -> None:
        with store._read() as tx:
            tx.one("audit_head")
            barrier.wait(10)

    threads = [threading.Thread(target=read) for _ in range(size)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)


def test_calls_after_every_pooled_connection_was_terminated_succeed(
    tagged: tuple[PostgresStore, str],
) -> None:
    store, name = tagged
    (request_id,) = pending(store, 1)
    for round_ in range(3):
        fill_the_pool(store)
        assert terminate_backends(name) >= 4
        assert store.get_request(request_id).status is RequestStatus.PENDING  # a read
        _, is_new = store.create_request(new_request(tool_call_id=f"after-{round_}"))  # a fused write
        assert is_new
        store.record("note", actor="test", channel="test")  # a write transaction
    assert store.decide(request_id, Approve(), actor="alice").status is RequestStatus.APPROVED
    assert store.verify_audit().ok


def test_a_read_whose_connection_dies_between_statements_is_read_again(
    tagged: tuple[PostgresStore, str],
) -> None:
    store, name = tagged
    (request_id,) = pending(store, 1)
    with store._read() as tx:
        assert tx.one("get_request", id=request_id) is not None
        assert terminate_backends(name) >= 1  # the connection this read holds
        again = tx.one("get_request", id=request_id)
    assert again is not None and again["id"] == request_id


def test_a_write_whose_connection_dies_mid_transaction_is_unavailable_and_changes_nothing(
    tagged: tuple[PostgresStore, str],
) -> None:
    store, name = tagged
    head = store.audit_head_seq()

    def write_across_the_termination() -> None:
        with store._write() as tx:
            tx.one("append_audit", **_note())
            terminate_backends(name)
            tx.one("append_audit", **_note())

    with pytest.raises(StoreUnavailable, match="the database server ended the connection") as raised:
        write_across_the_termination()
    assert "may or may not" not in raised.value.message  # it was before the commit: nothing was made
    assert store.audit_head_seq() == head
    assert store.verify_audit().ok


def test_an_unreachable_server_is_unavailable(pg_schema: str) -> None:
    with pytest.raises(StoreUnavailable, match="cannot connect to PostgreSQL"):
        PostgresStore("postgresql://postgres@127.0.0.1:1/test?connect_timeout=2", schema=pg_schema)


def _note() -> dict[str, object]:
    from signoff.store.core import AuditNote

    return AuditNote("note", actor="test", channel="test").params()
