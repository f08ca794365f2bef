"""The client's SSE parser (mcpbind.transports.http.client.sse_parse.SSEDecoder): sans-io, bytes in, events out."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from mcpbind.transports.http.client import SSEDecoder, SSEEvent, SSETooLarge

STREAM = (
    b": a comment\n"
    b"id: 1\n"
    b"retry: 250\n"
    b"data:\n"
    b"\n"
    b"event: message\n"
    b'data: {"a":\n'
    b"data: 1}\n"
    b"id: 2\n"
    b"\n"
    b"event: endpoint\r\n"
    b"data: /messages\r\n"
    b"\r\n"
    b"data:no space\r"
    b"\r"
    b"id: 3\n"
    b"\n"
)
EXPECTED = [
    SSEEvent("message", b""),
    SSEEvent("message", b'{"a":\n1}'),
    SSEEvent("endpoint", b"/messages"),
    SSEEvent("message", b"no space"),
]


def feed_all(decoder: SSEDecoder, chunks: list[bytes]) -> list[SSEEvent | SSETooLarge]:
    events: list[SSEEvent | SSETooLarge] = []
    for chunk in chunks:
        events += decoder.feed(chunk)
    return events


def test_fields_comments_and_line_endings() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(STREAM) == EXPECTED
    assert decoder.retry == 250
    assert decoder.last_event_id == "3"  # an event without data still moves the id


def test_every_split_into_two_chunks_gives_the_same_events() -> None:
    for cut in range(len(STREAM) + 1):
        decoder = SSEDecoder()
        assert feed_all(decoder, [STREAM[:cut], STREAM[cut:]]) == EXPECTED, cut
        assert decoder.last_event_id == "3"


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    points = [0, *sorted(cuts), len(STREAM)]
    chunks = [STREAM[a:b] for a, b in pairwise(points)]
    assert feed_all(SSEDecoder(), chunks) == EXPECTED


def test_crlf_split_between_chunks_is_one_line_end() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: x\r") == []
    assert decoder.feed(b"\n\r\n") == [SSEEvent("message", b"x")]


def test_last_event_id_is_set_on_dispatch_and_kept() -> None:
    decoder = SSEDecoder()

    def after(chunk: bytes) -> str | None:
        decoder.feed(chunk)
        return decoder.last_event_id

    assert after(b"id: 7\ndata: a\n") is None  # not dispatched yet
    assert after(b"\n") == "7"
    assert after(b"data: b\n\n") == "7"  # ids persist across events
    assert after(b"id: bad\0id\n\n") == "7"  # an id holding NUL is ignored
    assert after(b"id\n\n") is None  # an empty id resets it


def test_bad_retry_is_ignored_and_unknown_fields_too() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"retry: soon\nfoo: bar\ndata: x\n\n") == [SSEEvent("message", b"x")]
    assert decoder.retry is None


def test_bom_at_the_start_is_skipped() -> None:
    assert SSEDecoder().feed(b"\xef\xbb\xbfdata: x\n\n") == [SSEEvent("message", b"x")]


def test_an_incomplete_event_is_not_dispatched() -> None:
    assert SSEDecoder().feed(b"data: x\n") == []


def test_oversized_events_are_reported_and_the_stream_goes_on() -> None:
    decoder = SSEDecoder(max_event_size=10)
    # One long line, arriving in pieces: never buffered beyond the limit.
    events = feed_all(decoder, [b"data: " + b"x" * 8, b"x" * 50, b"x" * 50 + b"\n\n", b"data: ok\n\n"])
    assert len(events) == 2
    assert isinstance(events[0], SSETooLarge) and events[0].size > 10
    assert events[1] == SSEEvent("message", b"ok")
    assert len(decoder._line) == 0
    # Many short data lines adding up past the limit.
    events = decoder.feed(b"data: 12345\ndata: 67890\ndata: x\n\ndata: fine\n\n")
    assert isinstance(events[0], SSETooLarge) and events[0].size > 10
    assert events[1] == SSEEvent("message", b"fine")
    # Exactly at the limit is fine.
    assert decoder.feed(b"data: 0123456789\n\n") == [SSEEvent("message", b"0123456789")]
