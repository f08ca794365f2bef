"""The ``mcpbind serve --transport http`` options of a protected server: the common case
(JWTs checked against the issuer's key set, or introspection) from a few flags."""

from __future__ import annotations

import argparse
import os

from mcpbind.server.auth.settings import ResourceServerAuth

__all__ = ["CLIENT_SECRET_VARIABLE", "add_auth_arguments", "auth_from_arguments"]

# The introspection client's secret is read from the environment, never from the command line
# (which other users of the machine may see).
CLIENT_SECRET_VARIABLE = "MCPBIND_AUTH_CLIENT_SECRET"


def add_auth_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``--auth-*`` options to ``parser``."""
    group = parser.add_argument_group("authorization (HTTP: serve as an OAuth 2.1 protected resource)")
    group.add_argument("--auth-issuer", metavar="URL", help="the authorization server issuing the tokens")
    group.add_argument(
        "--auth-jwks-url", metavar="URL", help="its JWK Set: tokens are JWTs signed with its keys"
    )
    group.add_argument(
        "--auth-introspection-url",
        metavar="URL",
        help=f"or check tokens there (RFC 7662) as --auth-client-id, with the secret in ${CLIENT_SECRET_VARIABLE}",
    )
    group.add_argument("--auth-client-id", metavar="ID", help="the client id to introspect tokens with")
    group.add_argument(
        "--auth-audience",
        metavar="URL",
        help="this endpoint's public URL, the tokens' audience (default: the served URL)",
    )
    group.add_argument(
        "--auth-scopes",
        metavar="A,B",
        default="",
        help="comma-separated scopes every request needs (403 without)",
    )


def auth_from_arguments(
    args: argparse.Namespace, served_url: str, *, over_http: bool | None = None
) -> ResourceServerAuth | None:
    """The settings the options give (``None`` without ``--auth-issuer``); ``ValueError`` for
    options that do not go together or a bad URL. ``over_http``: whether the server is served
    over HTTP (default: ``serve``'s ``--transport http``)."""
    issuer: str | None = args.auth_issuer
    if issuer is None:
        if args.auth_jwks_url or args.auth_introspection_url or args.auth_audience or args.auth_scopes:
            raise ValueError("the --auth-* options need --auth-issuer")
        return None
    if over_http is None:
        over_http = args.transport == "http"
    if not over_http:
        raise ValueError("--auth-issuer protects an HTTP server: add --transport http")
    scopes = [scope.strip() for scope in args.auth_scopes.split(",") if scope.strip()]
    return ResourceServerAuth(
        issuer,
        args.auth_audience or served_url,
        jwks_url=args.auth_jwks_url,
        introspection_url=args.auth_introspection_url,
        client_id=args.auth_client_id,
        client_secret=os.environ.get(CLIENT_SECRET_VARIABLE) if args.auth_introspection_url else None,
        required_scopes=scopes,
    )
