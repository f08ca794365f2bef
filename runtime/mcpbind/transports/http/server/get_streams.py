"""The ``GET`` streams of a Streamable HTTP session: a stream for the messages unrelated to any
request (it gets the session's backlog first), and the resumption of a stream the client lost,
by ``Last-Event-ID``, from the event store: a POST stream up to its response, a GET stream as a
GET stream. Workers sharing a store resume each other's POST streams too, following the shared
event log up to the response (:mod:`~mcpbind.transports.http.server.followed`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import anyio

from mcpbind.protocol.errors import INVALID_REQUEST
from mcpbind.transports.http._asgi import Receive, Send
from mcpbind.transports.http.disconnect import Flag, cancel_on_disconnect
from mcpbind.transports.http.errors import SESSION_NOT_FOUND, HttpError
from mcpbind.transports.http.events import EventStore
from mcpbind.transports.http.server.followed import Following, follow, is_response
from mcpbind.transports.http.server.liveness import owner_tag
from mcpbind.transports.http.server.sessions import SessionState
from mcpbind.transports.http.server.sse_response import SSE_HEADERS, end, pump, write
from mcpbind.transports.http.server.transport import POLLING_VERSION
from mcpbind.transports.http.sse import FINAL
from mcpbind.transports.http.sse_encode import encode_event

__all__ = ["GetStreams"]


class GetStreams:
    """Serves the GET streams of an app's sessions; ``event_store`` (``None``: no priming event
    and no resumption) is the app's, ``keepalive`` as for
    :class:`~mcpbind.transports.http.server.post.RequestAnswers`. ``following``: how a POST
    stream another worker writes is followed (workers sharing a store; ``None``: never), as
    long as ``alive(tag)`` says its worker is alive."""

    def __init__(
        self,
        event_store: EventStore | None,
        keepalive: float | None,
        relays: Callable[..., Coroutine[Any, Any, None]] | None = None,
        following: Following | None = None,
        alive: Callable[[str], Awaitable[bool]] | None = None,
    ) -> None:
        self.event_store = event_store
        self.keepalive = keepalive
        self.following = following
        # Whether the worker of a tag is alive (the owner of a followed stream).
        self.alive = alive
        # Run beside each GET stream, ``relays(state, task_status=...)``, started before it
        # takes messages: what brings it the messages other workers relay (workers sharing
        # sessions).
        self.relays = relays

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
        live = stream is not None and not stream.finished
        queue = stream.attach() if stream is not None and live else None
        # Another worker's stream (its ids carry that worker's tag), not answered yet: followed.
        elsewhere = (
            self.following is not None
            and stream is None
            and not stream_id.startswith("p" + transport.stream_tag)
            and not any(is_response(event.data) for event in events)
        )
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
            elif elsewhere and self.following is not None:
                owner, alive = owner_tag(stream_id), self.alive

                async def owner_alive() -> bool:
                    return owner is None or alive is None or await alive(owner)

                await follow(
                    self.event_store,
                    state.id,
                    events[-1].id if events else last_event_id,
                    send,
                    ended=lambda: transport.closed,
                    keepalive=self.keepalive,
                    how=self.following,
                    retry_ms=transport.retry_ms,
                    alive=owner_alive,
                )
            tg.cancel_scope.cancel()
        if stream is not None:
            if outcome == FINAL or (not live and not gone.set):
                await transport.finished(stream)  # the response went out, live or replayed
            if queue is not None:
                stream.release(queue)  # (detached unless a newer connection took it over)
        if not gone.set:
            await end(send)
