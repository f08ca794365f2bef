"""Tests of mcpbind.transports.stdio.framing: LineFramer, sans-io (no event loop involved)."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from mcpbind.transports.base import MessageTooLarge
from mcpbind.transports.stdio import LineFramer


def drain(framer: LineFramer) -> list[bytes]:
    lines = []
    while (line := framer.next_line()) is not None:
        lines.append(line)
    return lines


def test_framer_joins_lines_split_across_chunks() -> None:
    framer = LineFramer()
    framer.feed(b'{"a"')
    assert framer.next_line() is None
    framer.feed(b':1}\n{"b":2}\n{')
    assert drain(framer) == [b'{"a":1}', b'{"b":2}']
    framer.feed(b'"c":3')
    assert framer.next_line() is None
    framer.feed(b"}\n")
    assert drain(framer) == [b'{"c":3}']
    assert framer.buffered == 0


def test_framer_strips_crlf_and_skips_empty_lines() -> None:
    framer = LineFramer()
    framer.feed(b"a\r\n\r\n\n\nb\n\r\nc\r")
    assert drain(framer) == [b"a", b"b"]
    framer.feed(b"\nx\ry\n")  # the \r of "c\r\n" arrives in the chunk before its \n
    assert drain(framer) == [b"c", b"x\ry"]  # only a trailing \r is framing


def test_framer_delivers_unterminated_final_line_at_eof() -> None:
    framer = LineFramer()
    framer.feed(b"a\nb")
    assert drain(framer) == [b"a"]
    at_eof_before = framer.eof
    assert not at_eof_before
    framer.feed_eof()
    assert framer.next_line() == b"b"
    assert framer.next_line() is None
    assert framer.eof
    with pytest.raises(RuntimeError):
        framer.feed(b"more")

    framer = LineFramer()
    framer.feed(b"c\r")
    framer.feed_eof()
    assert drain(framer) == [b"c"]
    assert framer.eof

    framer = LineFramer()
    framer.feed(b"d\n")
    framer.feed_eof()
    assert drain(framer) == [b"d"]
    assert framer.eof


def test_framer_limit_boundaries() -> None:
    framer = LineFramer(max_message_size=10)
    framer.feed(b"x" * 10 + b"\n" + b"y" * 10 + b"\r")  # limit+1 pending may be "...\r" of "\r\n"
    assert drain(framer) == [b"x" * 10]
    framer.feed(b"\n" + b"z" * 11 + b"\n")
    assert framer.next_line() == b"y" * 10
    with pytest.raises(MessageTooLarge) as info:
        framer.next_line()
    assert (info.value.size, info.value.limit) == (11, 10)
    assert framer.next_line() is None


def test_framer_discards_a_growing_oversized_line_and_reports_it_once() -> None:
    framer = LineFramer(max_message_size=10)
    framer.feed(b"ok\n" + b"x" * 25)
    assert framer.next_line() == b"ok"
    with pytest.raises(MessageTooLarge) as info:
        framer.next_line()
    assert info.value.size >= 11
    assert info.value.limit == 10
    assert framer.buffered == 0  # dropped, not kept
    for _ in range(100):  # the rest of the line arrives and is dropped as it comes
        framer.feed(b"x" * 1000)
        assert framer.next_line() is None  # no second report
        assert framer.buffered == 0
    framer.feed(b"xxx\nnext\n")
    assert drain(framer) == [b"next"]


def test_framer_oversized_line_at_eof_is_reported() -> None:
    framer = LineFramer(max_message_size=4)
    framer.feed(b"fine\n12345")  # 5 bytes pending: could still be "1234\r"
    assert drain(framer) == [b"fine"]
    framer.feed_eof()
    with pytest.raises(MessageTooLarge):
        framer.next_line()
    assert framer.next_line() is None
    assert framer.eof


def test_framer_delivers_a_1mb_line_in_64kb_chunks_intact() -> None:
    line = bytes(range(256)).replace(b"\n", b"N") * 4096  # 1 MiB, every byte value but \n
    data = line + b"\n" + b"after\n"
    framer = LineFramer()
    lines = []
    for i in range(0, len(data), 65536):
        framer.feed(data[i : i + 65536])
        lines += drain(framer)
    assert lines == [line, b"after"]


def test_framer_has_line_agrees_with_next_line() -> None:
    framer = LineFramer(100)
    framer.feed(b"one\ntwo\npart")
    assert framer.has_line()
    assert framer.next_line() == b"one"
    assert framer.has_line()
    assert framer.next_line() == b"two"
    assert not framer.has_line()
    assert not framer.has_line()  # asking twice changes nothing
    assert framer.next_line() is None
    framer.feed(b"ial\nnext")
    assert framer.has_line()
    assert framer.next_line() == b"partial"
    assert not framer.has_line()
    framer.feed_eof()
    assert framer.next_line() == b"next"


def cpu_seconds(work: Callable[[], None]) -> float:
    """The CPU time ``work`` takes in this process, the least of three runs (other processes on
    the machine, a slow one under coverage, change both sizes of a comparison alike)."""
    times = []
    for _ in range(3):
        started = time.process_time()
        work()
        times.append(time.process_time() - started)
    return min(times)


# Linear work takes 4 times as long on 4 times the input; quadratic work, 16 times.
GROWTH_LIMIT = 8


def test_framer_is_linear_on_a_large_line_in_small_chunks() -> None:
    # 16 MiB in 1 KiB chunks: rescanning the pending line on every chunk would search ~128 GB
    # (seconds), where appending the chunks to a buffer and searching each once takes milliseconds.
    chunk = b"a" * 1024
    kib = 16 * 1024

    def framed() -> None:
        framer = LineFramer(max_message_size=32 * 1024 * 1024)
        for _ in range(kib):
            framer.feed(chunk)
            assert framer.next_line() is None
        framer.feed(b"\n")
        line = framer.next_line()
        assert line is not None and len(line) == kib * 1024

    def appended() -> None:  # the least a framer does with them (a cost with the same memory use)
        buffer = bytearray()
        for _ in range(kib):
            buffer += chunk
            assert buffer.find(b"\n", len(buffer) - len(chunk)) < 0

    least, framing = cpu_seconds(appended), cpu_seconds(framed)
    # The framer's own work in Python (several times the least; more under coverage) is far
    # under this; a rescan is thousands of times it.
    assert framing < 100 * least, f"{framing:.3f}s against {least:.3f}s: the framer is not linear"


def test_framer_is_linear_on_many_small_lines_in_one_chunk() -> None:
    # Copying the rest of the buffer for each line would copy ~40 GB here.
    def lines(count: int) -> Callable[[], None]:
        data = b"".join(b'{"n":%08d}\n' % i for i in range(count))  # 4 MB for the larger

        def frame() -> None:
            framer = LineFramer()
            framer.feed(data)
            got = drain(framer)
            assert len(got) == count
            assert got[-1] == b'{"n":%08d}' % (count - 1)

        return frame

    small, large = cpu_seconds(lines(50_000)), cpu_seconds(lines(200_000))
    assert large < GROWTH_LIMIT * small, f"{small:.3f}s, then {large:.3f}s: the framer is not linear"
