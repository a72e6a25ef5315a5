"""Waking a SQLite store's waiters for other processes' commits: the kernel's notice that the WAL
was written (`store.file_writes`) where it gives one, polling `PRAGMA data_version` where not; a
lost notice delays, never loses, a wake-up."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from signoff import Approve
from signoff.store import SQLiteStore, sqlite_changes
from signoff.store.file_writes import FileWrites
from signoff.store.sqlite_changes import ChangeWatcher
from tests.test_store_requests import new_request

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


def decide_elsewhere(store: SQLiteStore, request_id: str, tmp_path: Path) -> None:
    """Approve `request_id` from another process (a real one: its commit reaches this one only
    through the database file)."""
    go = tmp_path / f"go-{request_id}"
    go.touch()
    done = subprocess.run(
        [sys.executable, "-m", "tests.scripts.decide", store.url, request_id, "alice-0", str(go)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        check=False,
    )
    assert done.stdout.strip() == "WON", done.stderr


def watcher_of(store: SQLiteStore) -> ChangeWatcher:
    for _ in range(2000):  # the watcher thread attaches itself when it starts
        found = [source for source in store.hub.sources if isinstance(source, ChangeWatcher)]
        if found:
            return found[0]
        time.sleep(0.005)
    raise AssertionError("the store's change watcher never started")


def truncate_wal(path: str) -> None:
    connection = sqlite3.connect(path)
    try:
        busy, _, _ = connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        connection.close()
    assert busy == 0, "the checkpoint could not truncate the WAL"


@pytest.mark.slow
@pytest.mark.parametrize("notices", [True, False], ids=["notices", "polling"])
def test_a_waiter_is_woken_by_another_process_before_and_after_the_wal_is_truncated(
    sqlite_store: SQLiteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, notices: bool
) -> None:
    """With notices on, the slow safety look is put off for an hour: only a notice can wake."""
    monkeypatch.setattr(sqlite_changes, "FILE_NOTICES", notices)
    monkeypatch.setattr(sqlite_changes, "SAFETY_INTERVAL", 3600.0)
    first, second = (sqlite_store.create_request(new_request(tool_call_id=f"cross-{n}"))[0] for n in range(2))
    waiters = [sqlite_store.subscribe(request.id) for request in (first, second)]
    watcher = watcher_of(sqlite_store)

    decide_elsewhere(sqlite_store, first.id, tmp_path)
    assert waiters[0].wait(30), "the decision made in the other process woke the waiter"
    assert not waiters[1].wait(0)

    truncate_wal(sqlite_store.path)
    assert os.path.getsize(f"{sqlite_store.path}-wal") == 0
    decide_elsewhere(sqlite_store, second.id, tmp_path)
    assert waiters[1].wait(30), "a decision written to the truncated WAL woke its waiter"

    if notices:
        assert watcher.writes is not None and watcher.notices >= 2
    else:
        assert watcher.writes is None and watcher.notices == 0
    for waiter in waiters:
        sqlite_store.unsubscribe(waiter)
    sqlite_store.close()
    assert not any(thread.name == "signoff-sqlite-changes" for thread in threading.enumerate()), (
        "closing the store ends the watcher's wait for a notice"
    )


def test_an_idle_watcher_looks_twice_a_second_however_many_wait(sqlite_store: SQLiteStore) -> None:
    """Nothing changes: the watcher sleeps on the kernel's notice, waking only for its safety look
    (counted, not timed: a slow machine only makes fewer)."""
    requests = [sqlite_store.create_request(new_request(tool_call_id=f"idle-{n}"))[0] for n in range(50)]
    waiters = [sqlite_store.subscribe(request.id) for request in requests for _ in range(200)]
    watcher = watcher_of(sqlite_store)
    assert watcher.writes is not None, "this Linux filesystem gives notices"
    time.sleep(sqlite_changes.IN_FLIGHT_SECONDS + 0.1)  # the last commit's follow-up looks are over
    before = watcher.looks
    time.sleep(1.0)
    assert watcher.looks - before <= 1.0 / sqlite_changes.SAFETY_INTERVAL + 1
    assert not any(waiter.wait(0) for waiter in waiters)
    for waiter in waiters:
        sqlite_store.unsubscribe(waiter)


def test_a_watcher_without_notices_still_finds_a_change_its_notice_missed(
    sqlite_store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No notice comes (a network filesystem, another OS): the data_version check still runs."""
    monkeypatch.setattr(FileWrites, "watch", classmethod(lambda cls, path: None))
    request = sqlite_store.create_request(new_request(tool_call_id="missed"))[0]
    waiter = sqlite_store.subscribe(request.id)
    other = SQLiteStore(sqlite_store.path)
    try:
        other.decide(request.id, Approve(), actor="alice")
        assert waiter.wait(30)
    finally:
        other.close()
        sqlite_store.unsubscribe(waiter)
    assert watcher_of(sqlite_store).writes is None


# -- the notices themselves --------------------------------------------------------------------


def test_a_write_and_a_truncation_are_noticed_and_silence_is_not(tmp_path: Path) -> None:
    path = tmp_path / "file"
    path.write_bytes(b"")
    writes = FileWrites.watch(path)
    assert writes is not None
    try:
        assert not writes.wait(0)
        with path.open("ab") as file:
            file.write(b"frame")
        assert writes.wait(5)
        assert not writes.wait(0), "a notice is consumed once"
        os.truncate(path, 0)
        assert writes.wait(5)
    finally:
        writes.close()


def test_a_replaced_file_is_watched_again(tmp_path: Path) -> None:
    path = tmp_path / "file"
    path.write_bytes(b"old")
    writes = FileWrites.watch(path)
    assert writes is not None
    try:
        replacement = tmp_path / "new"
        replacement.write_bytes(b"")
        os.replace(replacement, path)
        writes.wait(0)
        assert writes.rewatch()
        writes.wait(0)
        with path.open("ab") as file:
            file.write(b"frame")
        assert writes.wait(5), "writes to the file now at the path are noticed"
    finally:
        writes.close()


def test_no_notices_for_a_missing_file_or_a_network_filesystem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from signoff.store import file_writes

    assert FileWrites.watch(tmp_path / "absent") is None
    (tmp_path / "here").touch()
    monkeypatch.setattr(file_writes, "filesystem_type", lambda path: "nfs4")
    assert FileWrites.watch(tmp_path / "here") is None


def test_the_filesystem_type_comes_from_the_longest_mount_point() -> None:
    from signoff.store.file_writes import filesystem_type

    assert filesystem_type(Path("/proc/self")) == "proc"


def test_interrupt_ends_a_wait_from_another_thread(tmp_path: Path) -> None:
    path = tmp_path / "file"
    path.touch()
    writes = FileWrites.watch(path)
    assert writes is not None
    try:
        ended = threading.Event()
        waiting = threading.Thread(target=lambda: (writes.wait(3600), ended.set()))
        waiting.start()
        writes.interrupt()
        waiting.join(30)
        assert ended.is_set()
    finally:
        writes.close()
    writes.interrupt()  # after close: nothing to wake, no error
