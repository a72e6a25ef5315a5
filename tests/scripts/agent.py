"""A tiny agent process for restart tests: one guarded tool call, then exit.

usage: agent.py DB_URL THREAD_ID LOG_FILE MODE
MODE: suspend (exit 3 while pending), block (wait for the decision), slow (the tool hangs after
starting, to be killed), idempotent (the tool is declared idempotent).
Every time the tool body runs it appends a line to LOG_FILE. AGENT_LEASE (seconds, default 60)
is the gate's execution lease.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import timedelta
from pathlib import Path

from signoff import ExecutionInDoubt, Gate, RuleSet, Scope, Suspended, open_store

RULES = RuleSet.from_yaml("tools: {charge_card: {requires_approval: true}}")


def main() -> int:
    url, thread_id, log_file, mode = sys.argv[1:5]
    log = Path(log_file)
    store = open_store(url)
    lease = timedelta(seconds=float(os.environ.get("AGENT_LEASE", "60")))
    gate = Gate(store, rules=RULES, scope=Scope(thread_id=thread_id, agent="billing"), lease=lease)

    @gate.guard(suspend=mode == "suspend", idempotent=mode == "idempotent")
    def charge_card(customer: str, cents: int) -> str:
        with log.open("a") as handle:
            handle.write(f"ran {customer} {cents}\n")
        if mode == "slow":
            time.sleep(120)
        return f"charged {customer} {cents}"

    try:
        reply = charge_card(customer="cus_42", cents=1999)
    except Suspended as signal:
        print(f"PENDING {signal.pending.request_id}", flush=True)
        return 3
    except ExecutionInDoubt as error:
        print(f"IN_DOUBT {error}", flush=True)
        return 4
    finally:
        store.close()
    print(f"REPLY replayed={reply.replayed} {reply.content}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
