"""What the inbox and the chat channels both show: a request's card and the words about how it
ended or why a decision was refused (`cards`, `refusals`), the fields of the edit and answer
forms built from a schema and their problems (`form_fields`, `decision_form`), the previews of
long values (`previews`), and the visible rendering of what an agent sent (`rendering`); `utcnow`
is the clock a channel reads (the one signoff reads).

It sits below both the server and the channels and imports neither, so a channel (a shipped one
or a third party's) shows a request as the inbox does without reaching into the server.
"""

from .._util import cut, utcnow
from ..templates import REDACTED, redacted_result
from ..visible import visible, visible_json

__all__ = ["REDACTED", "cut", "redacted_result", "utcnow", "visible", "visible_json"]
