"""Close a SQLite store while threads read from it, many times over: run as a process, because a
connection closed under a running query crashes the interpreter instead of raising.

    python -m tests.scripts.close_while_reading DIR ROUNDS
"""

from __future__ import annotations

import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

from signoff._util import utcnow
from signoff.errors import StoreError
from signoff.requests import NewRequest
from signoff.store import SQLiteStore


def one_round(path: Path) -> None:
    store = SQLiteStore(path)
    for i in range(50):
        new = NewRequest(
            thread_id="t",
            tool_call_id=f"c{i}",
            tool_name="send_email",
            args={"i": i, "body": "x" * 500},
            description="d",
            deadline=utcnow() + timedelta(hours=1),
        )
        store.create_request(new)
    surprises: list[str] = []

    def read() -> None:
        while True:
            try:
                store.list_requests(limit=50)
            except StoreError:
                return  # the store's own answer once it is closed
            except Exception as exc:  # anything else is a defect
                surprises.append(repr(exc))
                return

    readers = [threading.Thread(target=read) for _ in range(4)]
    for reader in readers:
        reader.start()
    time.sleep(0.05)
    store.close()
    for reader in readers:
        reader.join(10)
    assert not any(reader.is_alive() for reader in readers), "a reader never ended"
    assert not surprises, surprises


def main(directory: str, rounds: str) -> None:
    for n in range(int(rounds)):
        one_round(Path(directory) / f"store-{n}.db")
    print("closed cleanly")


if __name__ == "__main__":
    main(*sys.argv[1:])
