"""Shadow hits written in the background: the agent's call never waits for the write, and a
write that fails loses the hits (logged), never the call. One daemon thread per gate, started at
a hit, writing what has queued up in one transaction, and gone once no hit came for a while (a
gate that saw hits once holds no thread, nor its store, for the rest of the process)."""

from __future__ import annotations

import logging
import queue
import threading
from typing import TYPE_CHECKING

from .shadow import ShadowHit

if TYPE_CHECKING:
    from .backend import Backend

log = logging.getLogger("signoff")
BATCH = 1000
"""Hits written per transaction at most."""
IDLE_SECONDS = 5.0
"""How long the writer waits for a hit before it ends (the next hit starts another)."""
QUEUE_LIMIT = 10_000
"""Hits waiting at most; beyond that new ones are dropped (and logged) rather than held in memory."""


class ShadowRecorder:
    def __init__(self, store: Backend) -> None:
        self.store = store
        self._queue: queue.Queue[ShadowHit] = queue.Queue(maxsize=QUEUE_LIMIT)
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.dropped = 0
        """Hits lost: the queue was full or their write failed."""

    def record(self, hits: list[ShadowHit]) -> None:
        """Queue hits to be written; returns at once."""
        for hit in hits:
            try:
                self._queue.put_nowait(hit)
            except queue.Full:
                self.dropped += 1
                if self.dropped % 1000 == 1:
                    log.warning(
                        "signoff: shadow hits come faster than they are written; %d lost", self.dropped
                    )
        self._start()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every hit queued so far is written (or lost); whether that happened in time."""
        done = threading.Event()

        def wait() -> None:
            self._queue.join()
            done.set()

        threading.Thread(target=wait, daemon=True).start()
        return done.wait(timeout)

    def _start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._write_forever, name="signoff-shadow", daemon=True
                )
                self._thread.start()

    def _write_forever(self) -> None:
        while True:
            try:
                first = self._queue.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                with self._lock:  # `record` queues, then starts a writer under this lock if none runs
                    if self._queue.empty():
                        self._thread = None
                        return
                continue
            batch = [first]
            while len(batch) < BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            try:
                self.store.record_shadow_hits(batch)
            except Exception:
                self.dropped += len(batch)
                log.warning("signoff: %d shadow hits could not be recorded", len(batch), exc_info=True)
            finally:
                for _ in batch:
                    self._queue.task_done()
