"""Line framing for stdio: bytes chunks in, newline-terminated messages out, bounded, no I/O.

Each message is one line of UTF-8 JSON ending in ``\\n``; messages never contain a newline
(a JSON encoder escapes them inside strings), so the newline is the whole framing. A trailing
``\\r`` is tolerated and empty lines are skipped. A line over the size limit is reported as
:class:`~mcpbind.transports.base.MessageTooLarge` and dropped without ever being buffered.
"""

from __future__ import annotations

from mcpbind.transports.base import DEFAULT_MAX_MESSAGE_SIZE, MessageTooLarge

__all__ = ["LineFramer"]


class LineFramer:
    """Split a byte stream into newline-terminated messages, without I/O.

    ``feed()`` chunks as they arrive, then call ``next_line()`` until it returns ``None`` (it
    needs more data) before feeding again; after ``feed_eof()`` a final unterminated line is
    still delivered, then ``next_line()`` returns ``None`` for good and :attr:`eof` is true.

    A line longer than ``max_message_size`` (not counting its ``\\n`` or ``\\r\\n``) makes
    ``next_line()`` raise :class:`MessageTooLarge` once, at the point of the stream where it
    was, as soon as it is known to be too long; the rest of it, up to its newline, is dropped
    as it arrives and never buffered. Memory stays bounded by the limit plus one fed chunk.

    Each byte is searched for a newline once (a scan offset remembers how far the pending
    line has been searched), so a large line arriving in small chunks costs linear time.
    """

    __slots__ = ("_buffer", "_discarding", "_eof", "_scan", "_start", "max_message_size")

    def __init__(self, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        if max_message_size < 1:
            raise ValueError("max_message_size must be at least 1")
        self.max_message_size = max_message_size
        self._buffer = bytearray()
        self._start = 0  # where the pending line starts in _buffer
        self._scan = 0  # _buffer[_start:_scan] holds no newline
        self._discarding = False  # dropping the rest of an oversized line already reported
        self._eof = False

    @property
    def eof(self) -> bool:
        """True once ``feed_eof()`` was called and every line has been taken."""
        return self._eof and self._start == len(self._buffer)

    @property
    def buffered(self) -> int:
        """Bytes held that no ``next_line()`` has returned yet."""
        return len(self._buffer) - self._start

    def has_line(self) -> bool:
        """Whether a complete line is buffered (``next_line()`` would return it without more
        data). What it searched is not searched again by ``next_line()``."""
        buffer = self._buffer
        newline = buffer.find(b"\n", self._scan)
        # Either way, no newline lies before where the next search starts.
        self._scan = len(buffer) if newline < 0 else newline
        return newline >= 0

    def feed(self, data: bytes) -> None:
        if self._eof:
            raise RuntimeError("feed() after feed_eof()")
        if self._discarding:
            newline = data.find(b"\n")
            if newline < 0:
                return
            self._discarding = False
            data = data[newline + 1 :]
        self._buffer += data

    def feed_eof(self) -> None:
        self._eof = True
        self._discarding = False

    def next_line(self) -> bytes | None:
        """The next complete line (no ``\\n``, no trailing ``\\r``), or ``None`` if none is ready.

        Raises :class:`MessageTooLarge` for a line over the limit, once per such line.
        """
        buffer = self._buffer
        limit = self.max_message_size
        while True:
            start = self._start
            newline = buffer.find(b"\n", self._scan)
            if newline < 0:
                return self._no_newline(start, limit)
            end = newline - 1 if newline > start and buffer[newline - 1] == 13 else newline
            self._start = self._scan = newline + 1
            size = end - start
            if size == 0:
                continue
            if size > limit:
                raise MessageTooLarge(size, limit)
            return bytes(buffer[start:end])

    def _no_newline(self, start: int, limit: int) -> bytes | None:
        buffer = self._buffer
        pending = len(buffer) - start
        if self._eof:
            # The final line had no newline: deliver it once, then nothing more.
            end = len(buffer) - 1 if pending and buffer[-1] == 13 else len(buffer)
            line = bytes(buffer[start:end])
            buffer.clear()
            self._start = self._scan = 0
            if len(line) > limit:
                raise MessageTooLarge(len(line), limit)
            return line or None
        # One more byte than the limit may still be the ``\r`` of a ``\r\n``.
        if pending > limit + 1:
            buffer.clear()
            self._start = self._scan = 0
            self._discarding = True
            raise MessageTooLarge(pending, limit)
        if start:
            # Drop what has been returned; once per fed chunk, not once per line.
            del buffer[:start]
            self._start = 0
        self._scan = len(buffer)
        return None
