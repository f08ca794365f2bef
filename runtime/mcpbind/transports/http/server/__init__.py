"""The Streamable HTTP server (MCP 2025-03-26 and later, 2026-07-28 included) as a raw ASGI 3
application.

::

    app = StreamableHTTPApp(server)          # mount it in any ASGI server, at /mcp
    await serve_http(server, port=8000)      # or run it on uvicorn (asyncio) / hypercorn (trio)

Each MCP session is an inline :class:`~mcpbind.runtime.session.Session` (``Server.inline_session``)
over a transport of this package (:mod:`.transport`): it has no task of its own. The task the ASGI server runs for
each POST hands its message to the session (``Session.feed``), which acts on it right there: a
request's handler runs in that task and writes its answer from it. A session between requests
is a few objects (about 3 KB) and no task. The app's task group, opened at ASGI ``lifespan``
startup (or in ``async with app.run():`` for hosts without lifespan), holds what outlives a
request: the idle-session expiry, and a helper task for each request whose handler waits for
something (it watches for the client going away and writes the SSE stream as it comes; a
handler that answers at once, as most do, needs none).

How messages travel, and the choices made where the specification leaves them open:

* ``POST``: one JSON-RPC message per body; batches (JSON arrays) are refused with 400 and
  -32600. A request is answered by an SSE stream carrying the messages its handler sends
  (progress, logs, sampling...) then the response, or with ``json_response=True`` by the
  response alone as ``application/json``; in that mode the other messages tied to a request go
  where unrelated messages go. A notification or response gets 202.
* ``Content-Type`` must be ``application/json`` (415); a body over ``max_body_size`` gets 413,
  whether ``Content-Length`` says so or the body turns out longer; bad JSON gets 400 and -32700.
  Such a body is read and dropped up to 1 MiB before the 413 (see
  :mod:`~mcpbind.transports.http.body`). All bodies being read or answered together hold at
  most ``max_body_bytes_in_flight`` bytes (counted from ``Content-Length`` before reading, else
  as they arrive): past it, 503 with ``Retry-After: 1``. A body must arrive within ``body_timeout`` seconds: past it, 408 and the
  connection is closed.
  ``MCP-Protocol-Version`` must name a version the server supports (else 400 and -32022, with
  ``data.supported`` listing them); when absent, 2025-03-26 is assumed (which matters only in
  stateless mode).
* MCP 2026-07-28, the stateless protocol, on the same endpoint (:mod:`.modern`): a POST whose
  ``MCP-Protocol-Version`` names it is served with no session, whatever the app's options (an
  ``Mcp-Session-Id`` or ``Last-Event-ID`` it carries is ignored, none is issued), on a fresh
  connection of its own, after its headers are checked against its body (:mod:`.mirrored`:
  ``MCP-Protocol-Version`` against ``_meta``, ``Mcp-Method``, ``Mcp-Name``, and the
  ``Mcp-Param-{Name}`` headers of tools whose input schemas use ``x-mcp-header``; 400 and
  -32020 when one is missing or differs). Errors get the statuses the specification gives
  (400; 404 for -32601). The answer is JSON unless the handler sends something before its
  response (progress, log messages, a ``subscriptions/listen``'s notifications): then an SSE
  stream without event ids, kept alive while it runs, which the client cancels by going away.
  GET and DELETE get 405. Nothing is kept between such requests: any instance of the app (any
  worker, any process behind a load balancer) answers any of them.
* ``Accept`` must list both ``application/json`` and ``text/event-stream`` (only the first in
  JSON-response mode; only the second for GET); wildcards (``*/*``, ``application/*``,
  ``text/*``) count, a missing header does not (406).
* Messages unrelated to a request (``list_changed`` and the like) go to one open GET stream
  (each message to exactly one). With none open they wait in a bounded backlog (``backlog``
  messages and ``max_buffered_bytes`` bytes, the oldest dropped with a debug log when full)
  that the next GET receives first.
* Every SSE event has an id, given by the :class:`~mcpbind.transports.http.events.EventStore` (a bounded
  :class:`~mcpbind.transports.http.events.MemoryEventStore` by default). A ``GET`` with ``Last-Event-ID``
  replays what followed on that stream and then goes on with it: a POST stream up to its
  response, a GET stream as a GET stream.
* Sessions that negotiated 2025-11-25 or later (whatever their ``MCP-Protocol-Version`` header
  says) get a priming event (an id and empty data, with ``retry:``) first on each stream, and a
  handler may end its POST's connection early with :func:`close_sse_stream`: the client comes
  back with ``GET`` + ``Last-Event-ID`` and gets the rest, response included.
* A client that disconnects from a POST stream does not cancel its request when the stream can
  be resumed (an event store is configured): the handler goes on and its events are kept.
  Otherwise (JSON-response mode, stateless mode, no event store) the handler is cancelled.
  The events of the last few completed POST streams of a session stay in the store too, for a
  client whose connection broke before the server noticed.
* A notification is answered 202 before its handler runs (in the POST's task, after the
  answer); a response from the client wakes the request that waits for it, then gets 202.
* Sessions: ids from :func:`secrets.token_urlsafe`. Past ``max_sessions`` an ``initialize``
  gets 503 with ``Retry-After`` (existing sessions are never evicted to make room). A session
  with no HTTP request in progress for ``session_idle_timeout`` seconds ends; so does one whose
  client has not sent ``notifications/initialized`` ``initialization_timeout`` seconds after
  its ``initialize``, and one whose client sends DELETE (204). Ended sessions answer 404.
* ``stateless=True``: no sessions; each POST runs on a fresh connection, initialized at the
  version of its ``MCP-Protocol-Version`` header (2025-03-26 when absent), and ends with it.
  GET and DELETE get 405. No lifespan is needed in this mode.
* What reaches the client depends on the mode (:func:`delivery_for` decides it, and the
  server's capabilities and refusals follow): messages unrelated to a request only on a GET
  stream, so without one (``stateless=True`` or ``get_stream=False``) the server declares no
  ``listChanged`` and no ``resources.subscribe`` (``resources/subscribe`` gets -32601), keeps
  no backlog, and refuses requests to the client from outside a request's handler. With
  ``json_response=True`` and no GET stream nothing but the response reaches the client: no
  ``logging`` is declared, log messages and progress are dropped, and every request to the
  client (sampling, elicitation, roots, ping) fails at once with an ``McpError`` naming the
  mode and the option to change; so does every request in stateless mode, where no answer
  from the client could reach the server. With ``json_response=True`` and a GET stream, a
  handler's requests to the client, progress and log messages go on the GET stream (the
  backlog keeps them, within its bounds, until the client opens one; a request waits for its
  answer up to its timeout); progress sent just before the response may reach the client
  after it (and be ignored): use SSE answers where that matters.
* DNS-rebinding protection: ``Host`` must match ``allowed_hosts`` and, when present,
  ``Origin`` must match ``allowed_origins`` (both default to the loopback names, with or
  without a port); 403 otherwise, before anything else. Pass ``None`` to turn a check off
  (e.g. behind a reverse proxy that checks). These checks and CORS are
  :class:`~mcpbind.transports.http.security.SecurityMiddleware`'s (see there for the patterns).
* A slow reader: at most ``max_buffered_events`` events and ``max_buffered_bytes`` bytes (or a
  single larger event) wait per stream. Past that, the handler answering a POST waits for its
  own client to read (only that request is held back). A GET stream takes what handlers of
  every session send to all (list changes, resource updates), and none of them waits for its
  client: a sender finding it full lets its writer run (a burst fills a stream before its
  writer gets the CPU), and if the writer is waiting for its client instead, the connection is
  ended once the write in progress completes. The client reconnects; with ``Last-Event-ID`` it
  gets what it missed from the event store, as far as the store still holds it.

Where each part lives: :mod:`.app` (the ASGI application: checks and routing), :mod:`.sessions`
(the session table and expiry), :mod:`.transport` (the routing transport a session writes to),
:mod:`.post` (answering a POSTed request, JSON or SSE), :mod:`.get_streams` (GET streams and
resumption), :mod:`.stateless` (stateless mode), :mod:`.modern` and :mod:`.mirrored` (MCP
2026-07-28 requests, and checking their headers), :mod:`.delivery` (what each mode can carry),
:mod:`.polling` (:func:`close_sse_stream`), :mod:`.request` and :mod:`.sse_response` (reading a
request, writing an SSE response), :mod:`.embedded` (:func:`serve_http` on uvicorn or
hypercorn) and :mod:`.listeners` (the sockets it listens on: bound, or inherited from a
process sharing them among workers). Shared with the legacy HTTP+SSE server, in :mod:`mcpbind.transports.http`:
``security`` (Host/Origin/CORS middleware), ``body``, ``media_types``, ``errors``,
``disconnect``, ``sse`` and ``sse_encode``, ``events``, ``header_values`` and
``param_headers`` (the headers 2026-07-28 mirrors from a request's body).
"""

from __future__ import annotations

from mcpbind.transports.http._asgi import Message, Receive, Scope, Send
from mcpbind.transports.http.server.app import (
    DEFAULT_ALLOWED_HOSTS,
    DEFAULT_ALLOWED_ORIGINS,
    StreamableHTTPApp,
)
from mcpbind.transports.http.server.delivery import delivery_for
from mcpbind.transports.http.server.embedded import serve_http
from mcpbind.transports.http.server.polling import close_sse_stream
from mcpbind.transports.http.server.transport import HttpSessionTransport

__all__ = [
    "DEFAULT_ALLOWED_HOSTS",
    "DEFAULT_ALLOWED_ORIGINS",
    "HttpSessionTransport",
    "Message",
    "Receive",
    "Scope",
    "Send",
    "StreamableHTTPApp",
    "close_sse_stream",
    "delivery_for",
    "serve_http",
]
