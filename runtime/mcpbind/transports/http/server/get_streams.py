"""The ``GET`` streams of a Streamable HTTP session: a stream for the messages unrelated to any
request (it gets the session's backlog first), and the resumption of a stream the client lost,
by ``Last-Event-ID``, from the event store: a POST stream up to its response, a GET stream as a
GET stream. A POST stream another worker is still writing (workers sharing a store) is
followed through the store until its response, until its worker is seen gone (no mark of life
in the store, checked every ``check_every`` seconds of silence), or until it has been silent
``max_silence`` seconds; it then ends with a ``retry:`` hint and the client resumes it again,
through any worker, or gives up."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from typing import Any, Final

import anyio
import msgspec
from anyio.abc import ObjectSendStream
from msgspec import UnsetType

from mcpbind.protocol.errors import INVALID_REQUEST
from mcpbind.protocol.peek import peek
from mcpbind.store.errors import StoreUnavailable
from mcpbind.transports.http._asgi import Receive, Send
from mcpbind.transports.http.disconnect import Flag, cancel_on_disconnect
from mcpbind.transports.http.errors import SESSION_NOT_FOUND, HttpError
from mcpbind.transports.http.events import EventStore, StoredEvent
from mcpbind.transports.http.server.liveness import owner_tag
from mcpbind.transports.http.server.sessions import SessionState
from mcpbind.transports.http.server.sse_response import SSE_HEADERS, end, pump, write
from mcpbind.transports.http.server.transport import POLLING_VERSION
from mcpbind.transports.http.sse import FINAL
from mcpbind.transports.http.sse_encode import PING, encode_event, encode_retry

__all__ = ["Follow", "GetStreams"]

log = logging.getLogger("mcpbind.http")

# ``follow(session_id, event_id)``: the events of a stream after ``event_id``, as any worker
# appends them (see StoreEventStore.follow).
Follow = Callable[[str, str], AbstractAsyncContextManager[AsyncIterator[StoredEvent]]]
# How long a followed stream of another worker may stay silent before its resumption ends.
MAX_SILENCE: Final = 60.0
# How often, while a followed stream is silent, whether its worker is alive is asked (seconds).
CHECK_EVERY: Final = 1.0
# The reconnection delay a followed stream that ends without its response gives the client (ms).
RETRY_MS: Final = 1000


def _is_response(data: bytes) -> bool:
    """Whether an event's message is a response (the last event of a POST stream)."""
    try:
        peeked = peek(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return False
    return isinstance(peeked.method, UnsetType) and not isinstance(peeked.id, UnsetType)


class GetStreams:
    """Serves the GET streams of an app's sessions; ``event_store`` (``None``: no priming event
    and no resumption) is the app's, ``keepalive`` as for
    :class:`~mcpbind.transports.http.server.post.RequestAnswers`."""

    def __init__(
        self,
        event_store: EventStore | None,
        keepalive: float | None,
        relays: Callable[..., Coroutine[Any, Any, None]] | None = None,
        follow: Follow | None = None,
        max_silence: float = MAX_SILENCE,
        *,
        alive: Callable[[str], Awaitable[bool]] | None = None,
        check_every: float = CHECK_EVERY,
    ) -> None:
        self.event_store = event_store
        self.keepalive = keepalive
        # Run beside each GET stream, ``relays(state, task_status=...)``, started before it
        # takes messages: what brings it the messages other workers relay (workers sharing
        # sessions).
        self.relays = relays
        # What follows a POST stream another worker writes (workers sharing an event store).
        self.follow = follow
        self.max_silence = max_silence
        # Whether the worker of a stream tag is alive (``None``: taken for alive).
        self.alive = alive
        self.check_every = check_every

    async def listen(
        self,
        state: SessionState,
        stream_id: str | None,
        replay: list[bytes],
        receive: Receive,
        send: Send,
    ) -> None:
        """Be a GET stream of the session (``stream_id``: the one resumed, after ``replay``)
        until the client goes away or the session ends."""
        transport = state.transport
        if transport.closed:
            raise HttpError(404, SESSION_NOT_FOUND, "Session ended")
        stream = transport.open_listener(stream_id)
        queue = stream.attach()
        try:
            async with anyio.create_task_group() as tg:
                gone = Flag()
                tg.start_soon(cancel_on_disconnect, receive, tg.cancel_scope, gone)
                await send(
                    {
                        "type": "http.response.start",
                        "status": 200,
                        "headers": [*SSE_HEADERS, *state.header],
                    }
                )
                version = transport.protocol_version
                if (
                    not replay
                    and self.event_store is not None
                    and version is not None
                    and version >= POLLING_VERSION
                ):
                    await write(send, await transport.prime(stream))
                for chunk in replay:
                    await write(send, chunk)
                if self.relays is not None:
                    await tg.start(self.relays, state)
                tg.start_soon(transport.listen, stream)
                await pump(queue, send, set(), self.keepalive)
                tg.cancel_scope.cancel()
        finally:
            transport.stop_listening(stream)
            queue.close()
        if not gone.set:
            await end(send)

    async def resume(self, state: SessionState, last_event_id: str, receive: Receive, send: Send) -> None:
        """Go on with the stream ``last_event_id`` belongs to, from that event (400 if the store
        never issued it): a POST stream up to its response, a GET stream as a GET stream."""
        transport = state.transport
        assert self.event_store is not None  # (the app resumes only with one)
        found = await self.event_store.replay(state.id, last_event_id)
        if found is None:
            raise HttpError(400, INVALID_REQUEST, f"Bad request: unknown Last-Event-ID {last_event_id!r}")
        stream_id, events = found
        replay = [encode_event(event.data, event.id) for event in events if event.data]
        if stream_id.startswith("g"):
            await self.listen(state, stream_id, replay, receive, send)
            return
        stream = transport.stream(stream_id)
        if (
            stream is None
            and self.follow is not None
            and transport.stream_tag
            and not stream_id.startswith("p" + transport.stream_tag)
            and not any(_is_response(event.data) for event in events)
        ):
            after = events[-1].id if events else last_event_id
            await self._follow(state, after, replay, receive, send, owner_tag(stream_id))
            return
        live = stream is not None and not stream.finished
        queue = stream.attach() if stream is not None and live else None
        outcome: int | None = None
        gone = Flag()
        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_on_disconnect, receive, tg.cancel_scope, gone)
            headers = [*SSE_HEADERS, *state.header]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            for chunk in replay:
                await write(send, chunk)
            if queue is not None:
                outcome = await pump(queue, send, {event.id for event in events}, self.keepalive)
            tg.cancel_scope.cancel()
        if stream is not None:
            if outcome == FINAL or (not live and not gone.set):
                await transport.finished(stream)  # the response went out, live or replayed
            if queue is not None:
                stream.release(queue)  # (detached unless a newer connection took it over)
        if not gone.set:
            await end(send)

    async def _follow(
        self,
        state: SessionState,
        after: str,
        replay: list[bytes],
        receive: Receive,
        send: Send,
        owner: str | None,
    ) -> None:
        """Resume a POST stream the worker ``owner`` is writing: ``replay``, then its events as
        that worker appends them, up to its response (or the client going away, the store lost,
        ``owner`` gone, or ``max_silence`` seconds without an event: then a ``retry:`` hint)."""
        gone = Flag()
        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_on_disconnect, receive, tg.cancel_scope, gone)
            headers = [*SSE_HEADERS, *state.header]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            for chunk in replay:
                await write(send, chunk)
            out, events = anyio.create_memory_object_stream[StoredEvent]()
            tg.start_soon(self._take, state.id, after, out)
            keepalive = self.max_silence if self.keepalive is None else self.keepalive
            answered = False
            async with events:
                last = last_ping = anyio.current_time()
                while True:
                    now = anyio.current_time()
                    wait = min(
                        self.max_silence - (now - last),
                        keepalive - (now - last_ping),
                        self.check_every if self.alive is not None and owner is not None else keepalive,
                    )
                    try:
                        with anyio.fail_after(max(0.0, wait)):
                            event = await events.receive()
                    except TimeoutError:
                        now = anyio.current_time()
                        if now - last >= self.max_silence:
                            break  # its worker may be gone: the client resumes it again
                        if self.alive is not None and owner is not None and not await self.alive(owner):
                            log.info("a resumed stream ends: the worker writing it (%s) is gone", owner)
                            break
                        if now - last_ping >= keepalive:
                            await write(send, PING)
                            last_ping = now
                        continue
                    except anyio.EndOfStream:
                        break
                    last = last_ping = anyio.current_time()
                    if event.data:
                        await write(send, encode_event(event.data, event.id))
                        if _is_response(event.data):
                            answered = True
                            break
            if not answered and not gone.set:
                await write(send, encode_retry(RETRY_MS))
            tg.cancel_scope.cancel()
        if not gone.set:
            await end(send)

    async def _take(self, session_id: str, after: str, out: ObjectSendStream[StoredEvent]) -> None:
        assert self.follow is not None
        async with out:
            try:
                async with self.follow(session_id, after) as events:
                    async for event in events:
                        await out.send(event)
            except StoreUnavailable as lost:  # the stream ends; the client may resume it again
                log.warning("a resumed stream ends, the store being unavailable: %s", lost)
