"""Reading a Server-Sent Events stream line by line (the WHATWG rules), without I/O."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ServerSentEvent:
    event: str
    data: str
    id: str | None


class SseDecoder:
    """Feed it the stream's lines (without their line breaks); it returns each complete event."""

    def __init__(self) -> None:
        self.last_event_id: str | None = None
        self._event = ""
        self._data: list[str] = []

    def feed(self, line: str) -> ServerSentEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            self._event = value
        elif field == "data":
            self._data.append(value)
        elif field == "id" and "\0" not in value:
            self.last_event_id = value
        return None

    def _dispatch(self) -> ServerSentEvent | None:
        event, data = self._event or "message", "\n".join(self._data)
        had_data = bool(self._data)
        self._event, self._data = "", []
        if not had_data:
            return None
        return ServerSentEvent(event=event, data=data, id=self.last_event_id)
