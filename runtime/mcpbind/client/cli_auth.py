"""Authorization for ``mcpbind call URL``: the command-line options and the ``httpx.Auth`` they
make. The flow starts only when the server answers 401: the user signs in through the browser
(a loopback redirect, RFC 8252), or with ``--client-credentials`` the client gets its token with
its own credentials; tokens and registrations are kept in a file (0600) for the next call.

Outside :mod:`mcpbind.client.auth` and importing it only when a call needs it: the options are
part of every ``mcpbind`` command line, which must work without the ``http`` and ``auth``
extras."""

from __future__ import annotations

import argparse
import math
import os
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    import httpx

    from mcpbind.client.auth.authorizer import Authorizer

__all__ = [
    "SECRET_ENV",
    "SIGN_IN_TIMEOUT",
    "UntimedAuthorizer",
    "add_auth_arguments",
    "auth_arguments_error",
    "command_line_auth",
    "default_token_store",
]

SECRET_ENV = "MCPBIND_CLIENT_SECRET"
# How long the user has to sign in; an HTTP request that waits for it may take this much longer.
SIGN_IN_TIMEOUT = 300.0


def default_token_store() -> Path:
    """``$XDG_CONFIG_HOME/mcpbind/tokens.json`` (``~/.config`` when unset; ``%APPDATA%`` on
    Windows)."""
    if sys.platform == "win32" and os.environ.get("APPDATA"):
        base = Path(os.environ["APPDATA"])
    else:
        base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "mcpbind" / "tokens.json"


def add_auth_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``call`` that concern a server demanding authorization."""
    group = parser.add_argument_group(
        "authorization (a URL whose server answers 401)",
        "The sign-in opens a browser, or prints the URL to visit (--no-browser); the time it takes "
        "does not count toward --timeout.",
    )
    group.add_argument("--client-id", metavar="ID", help="a client registered beforehand (default: register)")
    group.add_argument(
        "--client-secret",
        metavar="SECRET",
        help=f"its secret (default: ${SECRET_ENV}, which keeps it out of the process list)",
    )
    group.add_argument(
        "--client-credentials",
        action="store_true",
        help="no user: get the token with the client's own credentials (--client-id, and a secret or "
        "--private-key)",
    )
    group.add_argument(
        "--private-key",
        type=Path,
        metavar="PATH",
        help="with --client-credentials: sign in with this private key (PEM or JWK file; private_key_jwt)",
    )
    group.add_argument(
        "--issuer",
        metavar="URL",
        help="with --client-credentials: the authorization server the credentials are for; they are "
        "sent to no other (advised)",
    )
    group.add_argument("--scope", action="append", metavar="SCOPE", help="a scope to ask for (repeatable)")
    group.add_argument(
        "--no-browser", action="store_true", help="print the sign-in URL instead of opening it"
    )
    group.add_argument(
        "--redirect-port",
        type=int,
        default=0,
        metavar="PORT",
        help="the loopback port the browser is sent back to (default: a free one)",
    )
    group.add_argument(
        "--token-store",
        type=Path,
        metavar="PATH",
        help=f"where tokens and registrations are kept (default {default_token_store()})",
    )
    group.add_argument("--no-auth", action="store_true", help="never authorize (a 401 fails the call)")


class UntimedAuthorizer:
    """An authorizer during whose wait for the user the enclosing deadline stands still."""

    def __init__(self, inner: Authorizer, deadline: anyio.CancelScope | None) -> None:
        self._inner = inner
        self._deadline = deadline

    async def __call__(self, url: str) -> str:
        if self._deadline is None:
            return await self._inner(url)
        left = self._deadline.deadline - anyio.current_time()
        self._deadline.deadline = math.inf
        try:
            return await self._inner(url)
        finally:
            self._deadline.deadline = anyio.current_time() + max(left, 0.0)


def auth_arguments_error(args: argparse.Namespace) -> str | None:
    """What is wrong with the authorization options, if anything."""
    secret = args.client_secret or os.environ.get(SECRET_ENV)
    if args.client_credentials and not (args.client_id and (secret or args.private_key)):
        return (
            f"--client-credentials needs --client-id, and a secret (--client-secret or ${SECRET_ENV})"
            " or --private-key"
        )
    if args.private_key is not None and not args.client_credentials:
        return "--private-key goes with --client-credentials"
    if args.issuer is not None and not args.client_credentials:
        return "--issuer goes with --client-credentials"
    if args.private_key is not None and not args.private_key.is_file():
        return f"--private-key {args.private_key}: no such file"
    if args.client_secret and not args.client_id:
        return "--client-secret needs --client-id"
    if not 0 <= args.redirect_port <= 65535:
        return f"--redirect-port {args.redirect_port}: not a TCP port"
    if args.redirect_port and not args.no_auth and not args.client_credentials:
        try:  # a port taken is said now, not as a failure to reach the server
            with socket.socket() as probe:
                if sys.platform != "win32":  # as the listener will (a port in TIME_WAIT is free)
                    probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                probe.bind(("127.0.0.1", args.redirect_port))
        except OSError as exc:
            return f"--redirect-port {args.redirect_port}: cannot listen on 127.0.0.1 ({exc.strerror})"
    return None


def _scopes(args: argparse.Namespace) -> list[str] | None:
    scopes = [scope for value in args.scope or () for scope in value.split()]
    return scopes or None


@asynccontextmanager
async def command_line_auth(
    server_url: str, args: argparse.Namespace, deadline: anyio.CancelScope | None = None
) -> AsyncIterator[httpx.Auth | None]:
    """The ``httpx.Auth`` the options of :func:`add_auth_arguments` ask for (None with
    ``--no-auth``). ``deadline``: the call's ``--timeout``, paused while the user signs in."""
    if args.no_auth:
        yield None
        return
    from mcpbind.client.auth.client_credentials import ClientCredentials
    from mcpbind.client.auth.flow import OAuth
    from mcpbind.client.auth.loopback import LoopbackAuthorizer
    from mcpbind.client.auth.stores import FileTokenStore
    from mcpbind.oauth.registration import ClientInformation, ClientMetadata

    secret = args.client_secret or os.environ.get(SECRET_ENV) or None
    scopes = _scopes(args)
    if args.client_credentials:
        key = args.private_key.read_bytes() if args.private_key is not None else None
        yield ClientCredentials(
            server_url,
            client_id=args.client_id,
            client_secret=secret,
            private_key=key,
            scopes=scopes,
            issuer=args.issuer,
        )
        return
    store = FileTokenStore(args.token_store or default_token_store())
    information = (
        ClientInformation(client_id=args.client_id, client_secret=secret) if args.client_id else None
    )
    async with LoopbackAuthorizer(
        port=args.redirect_port, open_browser=not args.no_browser, timeout=SIGN_IN_TIMEOUT
    ) as loopback:
        metadata = ClientMetadata(
            client_name="mcpbind",
            redirect_uris=[loopback.redirect_uri],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
            application_type="native",
        )
        yield OAuth(
            server_url,
            client_metadata=metadata,
            authorize=UntimedAuthorizer(loopback, deadline),
            store=store,
            client_information=information,
            scopes=scopes,
            authorization_timeout=SIGN_IN_TIMEOUT,
        )
