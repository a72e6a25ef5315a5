"""One phase of a durable Agents SDK run in its own process (the CLI's store, through SIGNOFF_DB).

    python oa_process.py start|wait|resume|replay DIR

`start` runs until paused (and copies the kept run state to DIR/kept.txt); `wait` runs with
`wait=True` (and is killed while it waits); `resume` continues the kept run; `replay` puts the
copy back (as if the resuming process had died before forgetting it) and resumes again. Prints
one JSON line: paused, the requests waited for, what the model was shown last (its tool
outputs), the final output.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from signoff import RuleSet
from signoff.integrations.openai_agents import STATE_KIND, SignoffApproval
from tests.integrations.oa_support import USER, Ledger, agent, make_tools, outputs, script

THREAD = "nightly-1"
RULES = RuleSet.model_validate({"tools": {"send_email": {"requires_approval": True}}})


async def main(phase: str, folder: Path) -> None:
    approval = SignoffApproval(rules=RULES)
    tools = approval.gate_tools(make_tools(Ledger(folder / "ledger.jsonl")))
    model = script(first=phase in ("start", "wait"))
    store: Any = approval.gate.store
    if phase == "start":
        run = await approval.run(agent(model, tools), USER, thread_id=THREAD)
        kept = store.load_run_state(THREAD)
        (folder / "kept.txt").write_text(kept.state if kept is not None else "")
    elif phase == "wait":
        run = await approval.run(agent(model, tools), USER, thread_id=THREAD, wait=True)
    else:
        if phase == "replay":
            store.save_run_state(THREAD, (folder / "kept.txt").read_text(), kind=STATE_KIND)
        run = await approval.resume(agent(model, tools), THREAD)
    print(
        json.dumps(
            {
                "paused": run.paused,
                "waiting": [pending.request_id for pending in run.pending],
                "outputs": outputs(model) if model.calls else [],
                "final_output": run.final_output,
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2])))
