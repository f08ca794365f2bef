"""Following a POST stream another worker writes (mcpbind.transports.http.server.followed), on an
in-memory event log written by the test: the events after the client's last one as they come,
up to the response; a stream with no event for too long, whose session ended or whose writer
is gone (mcpbind.transports.http.server.liveness) ends with a ``retry:`` hint for the client
to resume again."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpbind.store import MemoryStore
from mcpbind.transports.http.events import MemoryEventStore
from mcpbind.transports.http.server.followed import Following, follow, is_response
from mcpbind.transports.http.server.liveness import WorkerLiveness, owner_tag

pytestmark = pytest.mark.anyio

QUICK = Following(first_delay=0.001, max_delay=0.01, silence=60.0)
NOTE = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}'
ANSWER = b'{"jsonrpc":"2.0","id":7,"result":{}}'


class Written:
    """An ASGI ``send`` that keeps the bodies written."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    async def __call__(self, message: Any) -> None:
        self.chunks.append(message["body"])

    @property
    def text(self) -> bytes:
        return b"".join(self.chunks)


def test_is_response() -> None:
    assert is_response(ANSWER)
    assert is_response(b'{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"no"}}')
    assert not is_response(NOTE)
    assert not is_response(b'{"jsonrpc":"2.0","id":8,"method":"ping"}')
    assert not is_response(b"")
    assert not is_response(b"not json")


async def test_the_events_written_elsewhere_are_followed_up_to_the_response() -> None:
    log = MemoryEventStore()
    priming = await log.append("s", "pB.1", b"")
    sent = Written()
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            done: list[bool] = []

            async def following() -> None:
                done.append(
                    await follow(log, "s", priming, sent, ended=lambda: False, keepalive=None, how=QUICK)
                )

            tg.start_soon(following)
            note = await log.append("s", "pB.1", NOTE)
            while not sent.chunks:  # (written as it comes, before the response is there)
                await anyio.sleep(0.001)
            answer = await log.append("s", "pB.1", ANSWER)
            await log.append("s", "pB.1", NOTE)  # (after the response: not written)
    assert done == [True]
    assert sent.text == (
        b"event: message\nid: " + note.encode() + b"\ndata: " + NOTE + b"\n\n"
        b"event: message\nid: " + answer.encode() + b"\ndata: " + ANSWER + b"\n\n"
    )


async def test_a_silent_stream_ends_with_a_retry_hint() -> None:
    log = MemoryEventStore()
    priming = await log.append("s", "pB.1", b"")
    sent = Written()
    how = Following(first_delay=0.001, max_delay=0.01, silence=0.05)
    with anyio.fail_after(10):
        answered = await follow(
            log, "s", priming, sent, ended=lambda: False, keepalive=0.01, how=how, retry_ms=250
        )
    assert not answered
    assert sent.chunks[-1] == b"retry: 250\n\n"
    assert set(sent.chunks[:-1]) <= {b": ping\n\n"}


async def test_a_stream_of_an_ended_session_ends() -> None:
    log = MemoryEventStore()
    priming = await log.append("s", "pB.1", b"")
    sent = Written()
    with anyio.fail_after(10):
        answered = await follow(log, "s", priming, sent, ended=lambda: True, keepalive=None, how=QUICK)
    assert not answered and sent.chunks == [b"retry: 1000\n\n"]


def test_following_takes_sensible_delays_only() -> None:
    for bad in ({"first_delay": 0.0}, {"first_delay": 2.0, "max_delay": 1.0}, {"silence": 0.0}):
        with pytest.raises(ValueError, match="following delays"):
            Following(**bad)


async def test_a_stream_whose_writer_is_gone_ends() -> None:
    log = MemoryEventStore()
    priming = await log.append("s", "pB.1", b"")
    sent = Written()
    asked: list[bool] = []

    async def alive() -> bool:
        asked.append(True)
        return len(asked) < 3  # (gone at the third question)

    how = Following(first_delay=0.001, max_delay=0.001, check_every=0.001)
    with anyio.fail_after(10):
        answered = await follow(
            log, "s", priming, sent, ended=lambda: False, keepalive=None, how=how, alive=alive
        )
    assert not answered and len(asked) == 3 and sent.chunks == [b"retry: 1000\n\n"]


def test_owner_tag() -> None:
    assert owner_tag("p1a2b3c4d.7") == "1a2b3c4d"
    assert owner_tag("g1a2b3c4d.12") == "1a2b3c4d"
    assert owner_tag("p7") is None  # (a worker sharing nothing)
    assert owner_tag("p.7") is None


async def test_a_worker_is_alive_while_it_marks_itself() -> None:
    store = MemoryStore()
    async with store:
        other = WorkerLiveness(store, "other")
        async with WorkerLiveness(store, "mine", ttl=60).running():
            assert await other.alive("mine")
            assert not await other.alive("someone")
        with pytest.raises(ValueError, match="ttl"):
            WorkerLiveness(store, "x", ttl=0)
