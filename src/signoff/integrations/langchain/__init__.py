"""signoff for LangChain / LangGraph agents (`pip install signoff[langchain]`).

`SignoffMiddleware` is a drop-in for `HumanInTheLoopMiddleware`; see its module.
"""

from .middleware import EDIT_NOTICE, SignoffMiddleware
from .resume import aresume_when_decided, resume_when_decided

__all__ = ["EDIT_NOTICE", "SignoffMiddleware", "aresume_when_decided", "resume_when_decided"]
