"""A protected MCP server: an OAuth 2.1 resource server whose tokens come from an authorization
server of your choice (its issuer and JWK Set URL in the environment).

Every request needs a token granting ``notes:read``; ``add_note`` needs ``notes:write`` too
(403 ``insufficient_scope`` without it, and the client steps up). Each user sees their own notes:
the handlers read who the token stands for from ``ctx.access_token``.

    MCP_AUTH_ISSUER=https://auth.example.com MCP_AUTH_JWKS_URL=https://auth.example.com/jwks \\
        python examples/protected_server.py [--port 8000] [--backend asyncio|trio]

The same from the command line, for any server file:
``mcpbind serve server.py --transport http --auth-issuer URL --auth-jwks-url URL --auth-scopes notes:read``.
"""

from __future__ import annotations

import argparse
import os
from collections import defaultdict

from mcpbind.runtime.context import RequestContext
from mcpbind.server.auth import ResourceServerAuth
from mcpbind.server.server import Server

server = Server("notes", "1.0")
notes: defaultdict[str, list[str]] = defaultdict(list)


def owner(ctx: RequestContext) -> str:
    token = ctx.access_token
    assert token is not None  # (every request to a protected server has one)
    return token.subject or token.client_id or "?"


@server.tool()
async def read_notes(ctx: RequestContext) -> str:
    """Your notes, one a line."""
    return "\n".join(notes[owner(ctx)]) or "(no notes)"


@server.tool(scopes=["notes:write"])
async def add_note(text: str, ctx: RequestContext) -> str:
    """Add a note (needs the notes:write scope)."""
    notes[owner(ctx)].append(text)
    return f"{len(notes[owner(ctx)])} notes"


def auth_settings(resource: str) -> ResourceServerAuth:
    return ResourceServerAuth(
        os.environ["MCP_AUTH_ISSUER"],
        resource,
        jwks_url=os.environ["MCP_AUTH_JWKS_URL"],
        required_scopes=["notes:read"],
        resource_name="Notes",
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    args = parser.parse_args()
    auth = auth_settings(f"http://127.0.0.1:{args.port}/mcp")
    server.run_http_sync("127.0.0.1", args.port, args.backend, auth=auth)


if __name__ == "__main__":
    main()
