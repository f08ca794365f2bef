"""The local OAuth 2.1 authorization server as an ASGI app (:class:`AuthorizationServer`), and
:func:`serve_authorization_server`, which serves it on 127.0.0.1 (uvicorn on asyncio, hypercorn
on trio) with its issuer set to the URL it is served at.

Routes (``{path}``: the issuer's path, ``""`` for an issuer at the root):

- ``GET /.well-known/oauth-authorization-server{path}``: metadata (RFC 8414);
- ``POST {path}/register``: dynamic client registration (RFC 7591);
- ``GET {path}/authorize``: approves at once (:mod:`tests.auth.authorize`);
- ``POST {path}/token``: the grants (:mod:`tests.auth.token`);
- ``GET {path}/jwks``: the public signing key (RFC 7517);
- ``POST {path}/introspect``: token introspection (RFC 7662)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from tests.auth.asgi import (
    Receive,
    Request,
    Response,
    Scope,
    Send,
    json_response,
    oauth_error,
    read_request,
)
from tests.auth.authorize import authorize
from tests.auth.clients import ClientError
from tests.auth.introspect import introspect
from tests.auth.metadata import metadata_document, metadata_path
from tests.auth.state import AuthorizationServerState
from tests.auth.token import token
from tests.http_harness import ServerName, loopback_socket, serve_asgi
from tests.raw_asgi import answer_lifespan

__all__ = ["AuthorizationServer", "serve_authorization_server"]

Endpoint = Callable[[AuthorizationServerState, Request], Response]


def _register(state: AuthorizationServerState, request: Request) -> Response:
    if request.method != "POST":
        return oauth_error("invalid_request", "use POST", 405, ("allow", "POST"))
    try:
        metadata = request.json()
    except ValueError:
        return oauth_error("invalid_client_metadata", "the body must be JSON")
    try:
        information = state.clients.register(metadata)
    except ClientError as refused:
        return oauth_error(refused.error, refused.description)
    return json_response(information, 201)


def _jwks(state: AuthorizationServerState, request: Request) -> Response:
    return json_response(state.key.jwks())


def _metadata(state: AuthorizationServerState, request: Request) -> Response:
    return json_response(metadata_document(state))


class AuthorizationServer:
    """The ASGI app over ``state`` (what it has issued is there for the tests to see)."""

    def __init__(self, state: AuthorizationServerState) -> None:
        self.state = state
        self.routes: dict[str, Endpoint] = {
            metadata_path(state): _metadata,
            f"{state.path}/register": _register,
            f"{state.path}/authorize": authorize,
            f"{state.path}/token": token,
            f"{state.path}/jwks": _jwks,
            f"{state.path}/introspect": introspect,
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await answer_lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        endpoint = self.routes.get(scope["path"])
        if endpoint is None:
            await Response(404, b"not found").send(send)
            return
        request = await read_request(scope, receive)
        if request is None:
            await oauth_error("invalid_request", "request too large", 413).send(send)
            return
        await endpoint(self.state, request).send(send)


@asynccontextmanager
async def serve_authorization_server(
    state: AuthorizationServerState | None = None, server: ServerName | None = None, **settings: Any
) -> AsyncIterator[AuthorizationServerState]:
    """Serve an authorization server (``state``, else one made of ``settings``) on a free port of
    127.0.0.1 until the block ends; its issuer is ``http://127.0.0.1:PORT{path}``."""
    state = state if state is not None else AuthorizationServerState(**settings)
    sock = loopback_socket()
    state.issuer = f"http://127.0.0.1:{sock.getsockname()[1]}{state.path}"
    async with serve_asgi(AuthorizationServer(state), server, sock):
        yield state
