"""The Streamable HTTP server under pressure: slow and stalled clients, many or large bodies,
half-open sessions, slow connections; and what its transport refuses to do."""

from __future__ import annotations

import anyio
import pytest

from mcpbind.http.server import HttpSessionTransport, StreamableHTTPApp
from tests import http_server_helpers as helpers
from tests.http_server_helpers import make_server

pytestmark = pytest.mark.anyio
backend_and_server, anyio_backend, asgi_server = (
    helpers.backend_and_server,
    helpers.anyio_backend,
    helpers.asgi_server,
)


# -- the session transport is fed, never read ------------------------------------------------


async def test_the_session_transport_refuses_to_be_read() -> None:
    """The app feeds its sessions each POST's message; nothing is queued for ``receive()``,
    which says so at once instead of waiting for messages that never come."""
    transport = HttpSessionTransport("s", event_store=None)
    with anyio.fail_after(5), pytest.raises(RuntimeError, match=r"Session\.feed"):
        await transport.receive()


def test_there_is_no_inbound_queue_to_bound() -> None:
    with pytest.raises(TypeError):
        StreamableHTTPApp(make_server(), max_queued_messages=16)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        HttpSessionTransport("s", event_store=None, max_queued_messages=16)  # type: ignore[call-arg]
