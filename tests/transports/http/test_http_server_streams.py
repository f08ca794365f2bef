"""The Streamable HTTP server's SSE streams: GET streams, priming and retry, resumption with
Last-Event-ID, polling (a handler closing its stream), keep-alive, and slow readers."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from mcpbind.transports.http.events import MemoryEventStore
from mcpbind.transports.http.server import StreamableHTTPApp
from tests import http_server_helpers as helpers
from tests.http_harness import ServerName
from tests.http_server_helpers import (
    EventReader,
    Probe,
    call,
    get_stream,
    headers,
    make_server,
    open_session,
    post,
    running,
)

pytestmark = pytest.mark.anyio
backend_and_server, anyio_backend, asgi_server = (
    helpers.backend_and_server,
    helpers.anyio_backend,
    helpers.asgi_server,
)


async def test_list_changed_goes_to_the_get_stream(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server())
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        async with get_stream(client, url, session_id) as stream:
            priming = await stream.next()
            assert priming["data"] == "" and priming["id"] and priming["retry"] == "1000"
            _, answers = await post(client, url, call(1, "changed"), session_id)
            # The POST carries only the response; the notification comes on the GET stream.
            assert [m.get("id") for m in answers] == [1]
            event = await stream.next()
            assert event["id"] and event["event"] == "message"
            assert json.loads(event["data"])["method"] == "notifications/tools/list_changed"


async def test_messages_before_any_get_wait_in_the_backlog(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server(), backlog=2)
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        for ident in range(3):
            await post(client, url, call(ident, "changed"), session_id)
        async with get_stream(client, url, session_id) as stream:
            # Three were sent, the backlog keeps the last two.
            first = await stream.next_message()
            second = await stream.next_message()
            assert first["method"] == second["method"] == "notifications/tools/list_changed"
            await post(client, url, call(9, "changed"), session_id)
            assert (await stream.next_message())["method"] == "notifications/tools/list_changed"
            with pytest.raises(TimeoutError):
                await stream.next_message(timeout=0.3)


async def test_each_message_goes_to_exactly_one_get_stream(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server(), keepalive_interval=None)
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        received: list[list[dict[str, Any]]] = [[], []]
        async with get_stream(client, url, session_id) as one, get_stream(client, url, session_id) as two:
            await one.next()  # priming
            await two.next()

            async def collect(stream: EventReader, into: list[dict[str, Any]]) -> None:
                while True:
                    try:
                        into.append(await stream.next_message(timeout=0.5))
                    except TimeoutError:
                        return

            for ident in range(10):
                await post(client, url, call(ident, "changed"), session_id)
            async with anyio.create_task_group() as tg:
                tg.start_soon(collect, one, received[0])
                tg.start_soon(collect, two, received[1])
        assert len(received[0]) + len(received[1]) == 10
        ids = [event for stream in received for event in stream]
        assert all(m["method"] == "notifications/tools/list_changed" for m in ids)


async def test_get_refusals(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server())
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        plain = {"mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}
        assert (await client.get(url, headers={**plain, "accept": "application/json"})).status_code == 406
        assert (await client.get(url, headers={"accept": "text/event-stream"})).status_code == 400
        unknown = {**plain, "accept": "text/event-stream", "mcp-session-id": "unknown"}
        assert (await client.get(url, headers=unknown)).status_code == 404
        bad_id = {**plain, "accept": "text/event-stream", "last-event-id": "nonsense"}
        assert (await client.get(url, headers=bad_id)).status_code == 400
    no_get = StreamableHTTPApp(make_server(), get_stream=False)
    async with running(no_get, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        response = await client.get(url, headers={**headers(session_id), "accept": "text/event-stream"})
        assert response.status_code == 405
        assert response.headers["allow"] == "POST, DELETE"


async def test_priming_and_retry_only_for_sessions_at_2025_11_25(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server(), retry_ms=321)
    async with running(app, asgi_server) as (url, client):
        new = await open_session(client, url, "2025-11-25")
        # The header says 2025-03-26; the session's negotiated version decides.
        response = await client.post(
            url, json=call(1, "echo", {"text": "a"}), headers=headers(new, "2025-03-26")
        )
        events = helpers.sse_events(response.text)
        assert events[0]["data"] == "" and events[0]["retry"] == "321" and events[0]["id"]
        assert json.loads(events[1]["data"])["id"] == 1
        old = await open_session(client, url, "2025-06-18")
        response = await client.post(
            url, json=call(1, "echo", {"text": "a"}), headers=headers(old, "2025-06-18")
        )
        events = helpers.sse_events(response.text)
        assert len(events) == 1 and "retry" not in events[0] and events[0]["id"]
        assert json.loads(events[0]["data"])["id"] == 1


async def test_polling_close_then_resume_gets_the_rest(asgi_server: ServerName) -> None:
    probe = Probe()
    app = StreamableHTTPApp(make_server(probe), retry_ms=50)
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        message = call(5, "poll", progressToken="p")
        async with client.stream(
            "POST", url, json=message, headers=headers(session_id, "2025-03-26")
        ) as response:
            events = await EventReader(response).rest()
        # The priming event, then the connection ends early with a retry.
        assert events[0]["data"] == "" and events[0]["id"]
        assert not [e for e in events if e.get("data")]
        assert any(e.get("retry") == "50" for e in events)
        last_id = [e["id"] for e in events if "id" in e][-1]
        await probe.started.wait()
        probe.release.set()
        async with get_stream(client, url, session_id, last_event_id=last_id) as resumed:
            rest = await resumed.rest()
        got = [json.loads(e["data"]) for e in rest if e.get("data")]
        assert got[0]["method"] == "notifications/progress"
        assert got[-1]["id"] == 5 and got[-1]["result"]["content"][0]["text"] == "polled True"


async def test_resume_while_the_handler_still_runs(asgi_server: ServerName) -> None:
    probe = Probe()
    app = StreamableHTTPApp(make_server(probe), retry_ms=50)
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        async with client.stream("POST", url, json=call(5, "poll"), headers=headers(session_id)) as response:
            events = await EventReader(response).rest()
        last_id = [e["id"] for e in events if "id" in e][-1]
        async with get_stream(client, url, session_id, last_event_id=last_id) as resumed:
            await probe.started.wait()
            probe.release.set()
            answer = await resumed.next_message()
            assert answer["id"] == 5
            with pytest.raises(EOFError):
                await resumed.next()


async def test_last_event_id_replays_a_get_stream(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server(), keepalive_interval=None)
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        async with get_stream(client, url, session_id) as stream:
            priming = await stream.next()
            await post(client, url, call(1, "changed"), session_id)
            first = await stream.next()
        # Sent while no stream is open: they go to the stream being resumed after the replay.
        await post(client, url, call(2, "changed"), session_id)
        await post(client, url, call(3, "changed"), session_id)
        async with get_stream(client, url, session_id, last_event_id=priming["id"]) as resumed:
            again = await resumed.next()
            assert (again["id"], again["data"]) == (first["id"], first["data"])
            later = [await resumed.next(), await resumed.next()]
            assert all(json.loads(e["data"])["method"] == "notifications/tools/list_changed" for e in later)
            assert len({first["id"], *(e["id"] for e in later)}) == 3


async def test_client_gone_from_a_resumable_stream_does_not_cancel(asgi_server: ServerName) -> None:
    probe = Probe()
    app = StreamableHTTPApp(make_server(probe))
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        async with client.stream("POST", url, json=call(8, "block"), headers=headers(session_id)) as response:
            reader = EventReader(response)
            priming = await reader.next()
            await probe.started.wait()
        # The connection is closed; the handler goes on, and its answer is kept.
        probe.release.set()
        await probe.finished.wait()
        async with get_stream(client, url, session_id, last_event_id=priming["id"]) as resumed:
            answer = await resumed.next_message()
        assert answer["id"] == 8 and answer["result"]["content"][0]["text"] == "released"
        assert not probe.cancelled.is_set()


async def test_keepalive_comments_on_idle_streams(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server(), keepalive_interval=0.05)
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        async with get_stream(client, url, session_id) as stream:
            await stream.next()  # priming
            assert (await stream.next(timeout=2))["comment"] == "ping"
            assert (await stream.next(timeout=2))["comment"] == "ping"


async def test_slow_reader_is_bounded(asgi_server: ServerName) -> None:
    """A client that stops reading: the handler is held back, memory does not grow."""
    store = MemoryEventStore(max_bytes_per_session=1 << 20)
    app = StreamableHTTPApp(make_server(), max_buffered_events=4, keepalive_interval=None, event_store=store)
    count, size = 300, 100_000  # 30 MB in all: more than socket buffers hold
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        message = call(3, "chatter", {"count": count, "size": size})
        async with client.stream("POST", url, json=message, headers=headers(session_id)) as response:
            reader = EventReader(response)
            await reader.next()  # priming
            await reader.next_message()
            # Not reading: the server queues a few events, then holds the handler back.
            state = next(iter(app.sessions.values()))
            (stream,) = state.transport._streams.values()
            with anyio.fail_after(20):
                while stream._queue is None or len(stream._queue) < 4:
                    await anyio.sleep(0.01)
            for _ in range(20):  # and there it stays, however long nobody reads
                await anyio.sleep(0.01)
                assert not stream.finished
                assert stream._queue is not None and len(stream._queue) <= 4
            assert store.size <= 1 << 20
            got = 1
            while True:
                answer = await reader.next_message(timeout=10)
                got += 1
                if "id" in answer:
                    break
        assert answer["result"]["content"][0]["text"] == f"said {count}"
        assert got == count + 1
        assert store.size <= 1 << 20


async def test_many_concurrent_posts_each_get_their_answer(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server())
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        answers: dict[int, str] = {}

        async def one(ident: int) -> None:
            _, got = await post(
                client, url, call(ident, "progress", {"steps": 2}, progressToken=ident), session_id
            )
            assert [m["params"]["progressToken"] for m in got[:-1]] == [ident, ident]
            answers[ident] = got[-1]["result"]["content"][0]["text"]

        async with anyio.create_task_group() as tg:
            for ident in range(20):
                tg.start_soon(one, ident)
        assert answers == dict.fromkeys(range(20), "done 2")


async def test_response_on_closed_client_is_not_lost_for_httpx(asgi_server: ServerName) -> None:
    """httpx reading an SSE answer with a plain (non-streaming) request works too."""
    app = StreamableHTTPApp(make_server())
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        response = await client.post(
            url, json=call(1, "echo", {"text": "plain"}), headers=headers(session_id)
        )
        assert isinstance(response, httpx.Response)
        assert helpers.messages(helpers.sse_events(response.text))[-1]["id"] == 1


async def test_sampling_request_on_the_post_stream_answered_by_another_post(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server())
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        async with client.stream("POST", url, json=call(4, "ask"), headers=headers(session_id)) as response:
            reader = EventReader(response)
            sampling = await reader.next_message()
            assert sampling["method"] == "sampling/createMessage"
            answer = {
                "jsonrpc": "2.0",
                "id": sampling["id"],
                "result": {"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m"},
            }
            accepted = await client.post(url, json=answer, headers=headers(session_id))
            assert accepted.status_code == 202
            result = await reader.next_message()
        assert result["id"] == 4 and result["result"]["content"][0]["text"] == "hello"


async def test_json_mode_sends_other_messages_of_a_request_to_the_get_stream(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server(), json_response=True, keepalive_interval=None)
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        async with get_stream(client, url, session_id) as stream:
            await stream.next()  # priming
            response, answers = await post(
                client, url, call(2, "progress", {"steps": 2}, progressToken="t"), session_id
            )
            assert response.headers["content-type"] == "application/json"
            assert [m["id"] for m in answers] == [2]
            progress = [await stream.next_message(), await stream.next_message()]
            assert [m["params"]["progress"] for m in progress] == [1, 2]
