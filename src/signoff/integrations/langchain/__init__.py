"""signoff for LangChain / LangGraph agents (`pip install signoff[langchain]`).

`SignoffMiddleware` is a drop-in for `HumanInTheLoopMiddleware`; see its module. For agents that
keep the stock middleware, `.inbox` turns its interrupts into signoff requests and back.
"""

from .inbox import StockReview, open_stock_requests, resume_stock_when_decided, stock_resume
from .middleware import EDIT_NOTICE, SignoffMiddleware
from .resume import aresume_when_decided, resume_when_decided

__all__ = [
    "EDIT_NOTICE",
    "SignoffMiddleware",
    "StockReview",
    "aresume_when_decided",
    "open_stock_requests",
    "resume_stock_when_decided",
    "resume_when_decided",
    "stock_resume",
]
