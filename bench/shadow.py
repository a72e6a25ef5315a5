"""Rules tried in shadow: what they cost the gate's call that runs unasked, and how fast a preview
replays recorded calls.

    .venv/bin/python bench/shadow.py [--calls N] [--recorded N]

The gate (SQLite, rules from the store) reviews N calls the rules in force let run, of a tool
asked about nowhere (`search`) and of one whose `when` is false for these args (`other`): with
no shadow, with a shadow that asks about neither (the fast path stays), and with one that asks
about `search` (every call a hit, queued for the background writer; how long that writer then
takes is reported too). Then `replay_rules` over N recorded requests. Prints a table and writes
bench/results/shadow.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from signoff import Gate, Scope, ToolCall
from signoff._util import utcnow
from signoff.requests import NewRequest
from signoff.rules import RuleSet
from signoff.store import SQLiteStore

RESULTS_PATH = Path(__file__).resolve().parent / "results" / "shadow.json"
LIVE = RuleSet.from_yaml(
    "tools:\n  search: {requires_approval: false}\n  other: {requires_approval: true, when: 'args.x == 1'}\n"
)
SHADOWS = {
    "none": None,
    "asking nowhere": RuleSet.from_yaml(
        "tools:\n  search: {requires_approval: false}\n  other: {requires_approval: false}\n"
    ),
    "asking (a hit per call)": RuleSet.from_yaml(
        "tools:\n  search: {requires_approval: true}\n"
        "  other: {requires_approval: true, when: 'args.x == 1'}\n"
    ),
}


def gate_cost(name: str, shadow: RuleSet | None, calls: int) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        store = SQLiteStore(os.path.join(folder, "bench.db"))
        store.replace_rules(LIVE, actor="bench")
        if shadow is not None:
            store.add_shadow_rules(shadow, label=name, actor="bench")
        gate = Gate(store, scope=Scope(thread_id="t", agent="a"), rules_refresh=60)
        for tool in ("search", "other"):
            batch = [ToolCall(name=tool, args={"x": 2}, id=f"{tool}{n}") for n in range(calls)]
            gate.review(batch[0])
            start = time.perf_counter()
            for call in batch:
                gate.review(call)
            per_call = (time.perf_counter() - start) / calls
            start = time.perf_counter()
            gate._gate_rules.recorder.flush(120)
            rows.append(
                {
                    "shadow": name,
                    "tool": tool,
                    "us_per_call": round(per_call * 1e6, 2),
                    "writer_drained_s": round(time.perf_counter() - start, 3),
                    "dropped": gate._gate_rules.recorder.dropped,
                }
            )
        store.close()
    return rows


def replay_rate(recorded: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        store = SQLiteStore(os.path.join(folder, "bench.db"))
        store.replace_rules(LIVE, actor="bench")
        deadline = utcnow() + timedelta(hours=1)
        for start in range(0, recorded, 500):
            with store.grouped():
                for n in range(start, min(start + 500, recorded)):
                    new = NewRequest(
                        thread_id="t",
                        tool_call_id=f"c{n}",
                        tool_name="other",
                        args={"x": n % 3},
                        description="other",
                        deadline=deadline,
                    )
                    store.create_request(new)
        proposed = SHADOWS["asking (a hit per call)"]
        assert proposed is not None
        start_at = time.perf_counter()
        report = store.replay_rules(proposed, days=7)
        seconds = time.perf_counter() - start_at
        store.close()
    return {
        "recorded": report.calls,
        "seconds": round(seconds, 3),
        "calls_per_s": round(report.calls / seconds),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--recorded", type=int, default=10_000)
    options = parser.parse_args()
    rows = [row for name, shadow in SHADOWS.items() for row in gate_cost(name, shadow, options.calls)]
    replay = replay_rate(options.recorded)
    for row in rows:
        print(
            f"{row['shadow']:<26} {row['tool']:<7} {row['us_per_call']:>7.2f} us/call  "
            f"writer drained in {row['writer_drained_s']:.3f} s, {row['dropped']} dropped"
        )
    replayed = f"{replay['recorded']} recorded calls replayed in {replay['seconds']} s"
    print(f"preview: {replayed} ({replay['calls_per_s']}/s)")
    machine = {"python": platform.python_version(), "cpus": os.cpu_count(), "load": list(os.getloadavg())}
    results = {"machine": machine, "calls": options.calls, "gate": rows, "replay": replay}
    RESULTS_PATH.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
