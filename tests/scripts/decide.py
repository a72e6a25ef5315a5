"""Decide one request from another process, starting when GO_FILE appears.

usage: decide.py DB_URL REQUEST_ID ACTOR GO_FILE
prints WON or LOST <error>
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from signoff import Approve, Reject, SignoffError, open_store


def main() -> int:
    url, request_id, actor, go_file = sys.argv[1:5]
    store = open_store(url)
    decision = Approve() if actor.endswith(("0", "2")) else Reject(message=f"no from {actor}")
    try:
        while not Path(go_file).exists():
            time.sleep(0.001)
        store.decide(request_id, decision, actor=actor, channel="test")
    except SignoffError as error:
        print(f"LOST {type(error).__name__}: {error}", flush=True)
        return 0
    finally:
        store.close()
    print("WON", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
