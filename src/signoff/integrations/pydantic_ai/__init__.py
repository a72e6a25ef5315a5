"""signoff for Pydantic AI agents (`pip install signoff[pydantic-ai]`).

`SignoffApprovals` (a capability for the whole agent) or `signoff_approval(toolset)` (one
toolset) put tool calls behind signoff's rules; `resume_when_decided` / `decided_results`
continue a durable run, and `resume_when_decided(agent, None, ...)` a waiting run whose process
died while it waited. See the modules.
"""

from .capability import SignoffApprovals
from .resume import (
    aresume_when_decided,
    await_results,
    decided_results,
    pending_requests,
    resume_when_decided,
    wait_results,
)
from .toolset import SignoffApprovalToolset, signoff_approval

__all__ = [
    "SignoffApprovalToolset",
    "SignoffApprovals",
    "aresume_when_decided",
    "await_results",
    "decided_results",
    "pending_requests",
    "resume_when_decided",
    "signoff_approval",
    "wait_results",
]
