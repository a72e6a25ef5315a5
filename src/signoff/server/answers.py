"""JSON answers that can always be written, so that no answer fails after its change committed.

What signoff stores is JSON it can send back (see `signoff.jsonvalues`), but a database written
before it refused NaN and infinities may still hold them; Starlette's JSONResponse would then
fail with a 500 after the commit of, say, a cancel of that request. They are sent as null
instead, as the endpoints that FastAPI serializes (through pydantic) already do.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from ..jsonvalues import finite_copy


class SafeJSONResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except ValueError:  # NaN or infinities (and UnicodeEncodeError: lone surrogates)
            return super().render(finite_copy(content))
