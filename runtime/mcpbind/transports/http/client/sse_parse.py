"""Server-Sent Events parsing for the HTTP clients (Streamable HTTP and the legacy HTTP+SSE).

:class:`SSEDecoder` is sans-io: feed it the bytes of a ``text/event-stream`` response as they
arrive and it returns the events they completed. It works on bytes (message payloads are never
decoded to text and back) and bounds what it holds: an event larger than the limit is dropped
while it arrives and reported as :class:`SSETooLarge`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mcpbind.transports.base import DEFAULT_MAX_MESSAGE_SIZE

__all__ = ["MAX_RETRY", "SSEDecoder", "SSEEvent", "SSETooLarge"]


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """A dispatched event: its type (``message`` when the stream named none) and data."""

    type: str
    data: bytes


@dataclass(frozen=True, slots=True)
class SSETooLarge:
    """An event whose data (or one of whose lines) went over the limit; its data was dropped."""

    size: int


_EOL = re.compile(rb"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"
# A ``retry:`` of more digits than this counts as MAX_RETRY (about 116 days) instead.
_RETRY_DIGITS = 10
MAX_RETRY = 10**_RETRY_DIGITS - 1


class SSEDecoder:
    """Incremental ``text/event-stream`` parser (the WHATWG algorithm) over bytes, without I/O.

    ``feed()`` each chunk and get the events it completed. ``last_event_id`` is the id the
    stream stands at (set when an event is dispatched, even one without data, as the standard
    says) and ``retry`` the last ``retry:`` value in milliseconds (at most :data:`MAX_RETRY`:
    a longer string of digits is taken as that). Lines end with CRLF, LF or
    CR. An event whose data exceeds ``max_event_size`` bytes, or holding a line longer than
    that, is reported as :class:`SSETooLarge` and its data is never held beyond the limit.
    """

    __slots__ = (
        "_data",
        "_data_size",
        "_id_buffer",
        "_line",
        "_line_limit",
        "_oversized",
        "_pending_cr",
        "_skipping",
        "_started",
        "_type",
        "last_event_id",
        "max_event_size",
        "retry",
    )

    def __init__(self, max_event_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        if max_event_size < 1:
            raise ValueError("max_event_size must be at least 1")
        self.max_event_size = max_event_size
        # A data line holds "data: " before the payload.
        self._line_limit = max_event_size + 6
        self._line = bytearray()
        self._skipping = False  # dropping the rest of an overlong line
        self._pending_cr = False  # the last chunk ended in CR: a LF starting the next is its pair
        self._started = False
        self._data: list[bytes] = []
        self._data_size = 0
        self._oversized = 0  # the size seen so far of an event over the limit, else 0
        self._type = b""
        self._id_buffer: str | None = None
        self.last_event_id: str | None = None
        self.retry: int | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent | SSETooLarge]:
        events: list[SSEEvent | SSETooLarge] = []
        pos, end = 0, len(chunk)
        if not self._started and end:
            self._started = True
            if chunk.startswith(_BOM):
                pos = len(_BOM)
        if self._pending_cr and pos < end:
            self._pending_cr = False
            if chunk[pos] == 0x0A:
                pos += 1
        while pos < end:
            match = _EOL.search(chunk, pos)
            if match is None:
                self._append(chunk, pos, end)
                break
            self._append(chunk, pos, match.start())
            pos = match.end()
            if pos == end and chunk[pos - 1] == 0x0D:
                self._pending_cr = True
            if self._skipping:
                self._skipping = False
            else:
                event = self._line_done(bytes(self._line))
                if event is not None:
                    events.append(event)
            self._line.clear()
        return events

    def _append(self, chunk: bytes, start: int, stop: int) -> None:
        if self._skipping or start == stop:
            return
        if len(self._line) + (stop - start) > self._line_limit:
            self._oversized = max(self._oversized, self._data_size + len(self._line) + stop - start)
            self._skipping = True
            self._line.clear()
            return
        self._line += chunk[start:stop]

    def _line_done(self, line: bytes) -> SSEEvent | SSETooLarge | None:
        if not line:
            return self._dispatch()
        if line[0] == 0x3A:  # ":" starts a comment
            return None
        name, colon, value = line.partition(b":")
        if colon and value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            if self._oversized:
                self._oversized += len(value) + 1
                return None
            self._data_size += len(value) + (1 if self._data else 0)
            if self._data_size > self.max_event_size:
                self._oversized = self._data_size
                self._data.clear()
                return None
            self._data.append(value)
        elif name == b"event":
            self._type = value
        elif name == b"id":
            if b"\0" not in value:
                self._id_buffer = value.decode("utf-8", "replace")
        elif name == b"retry":
            if value.isdigit():  # (ASCII digits only: these are bytes)
                # int() refuses over 4,300 digits; a longer value means "not soon" all the same.
                self.retry = int(value) if len(value) <= _RETRY_DIGITS else MAX_RETRY
        return None

    def _dispatch(self) -> SSEEvent | SSETooLarge | None:
        self.last_event_id = self._id_buffer or None
        data, oversized, kind = self._data, self._oversized, self._type
        self._data, self._data_size, self._oversized, self._type = [], 0, 0, b""
        if oversized:
            return SSETooLarge(oversized)
        if not data:
            return None
        payload = data[0] if len(data) == 1 else b"\n".join(data)
        return SSEEvent(kind.decode("utf-8", "replace") or "message", payload)
