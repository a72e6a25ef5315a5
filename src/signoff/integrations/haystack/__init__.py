"""signoff for Haystack agents (`pip install signoff[haystack]`; haystack-ai >= 3.4, < 4).

- `SignoffConfirmationStrategy`: a `ConfirmationStrategy` whose rules are signoff's; `run` waits
  for the decision, `run_async` waits as a coroutine.
- `SignoffConfirmationHook`: Haystack's `ConfirmationHook`, telling the strategy the model turn; use
  it for the strategy (under the stock hook an unattended run's cap counts calls, not turns).
- `SignoffConfirmationUI`: a `ConfirmationUI` for Haystack's own `BlockingConfirmationStrategy`
  and policies; the person decides in signoff.
- `SignoffPauseHook` + `resume`: a durable pause (the process may exit) and its continuation;
  `resume(agent, None, ...)` continues a waiting run (under `SignoffConfirmationHook`) whose
  process died while it waited, from the history it kept in signoff's store.

The run's scope comes from `hook_context["signoff"]` (see `context`). Importing this package puts
its classes on Haystack's deserialization allowlist, so serialized agents and pipelines that use
them load (`Pipeline.loads`, `Agent.from_dict`): see `serialization`.
"""

from .context import SCOPE_KEY
from .hook import SignoffConfirmationHook
from .pause import AWAITING_APPROVAL, PENDING_KEY, SignoffPauseHook, waiting_requests
from .resume import resume, resume_async
from .serialization import trust_signoff_classes
from .strategy import SignoffConfirmationStrategy
from .ui import SignoffConfirmationUI

trust_signoff_classes()

__all__ = [
    "AWAITING_APPROVAL",
    "PENDING_KEY",
    "SCOPE_KEY",
    "SignoffConfirmationHook",
    "SignoffConfirmationStrategy",
    "SignoffConfirmationUI",
    "SignoffPauseHook",
    "resume",
    "resume_async",
    "waiting_requests",
]
