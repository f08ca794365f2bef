"""An mcpbind stdio server with middleware and a lifespan, for tests/test_middleware.py.

    python tests/peers/middleware_server.py --backend asyncio|trio --marker PATH

Its middleware refuses ``tools/call`` of ``secret`` with -32600 "not for you". Its lifespan
appends ``entered`` to PATH when entered and ``exited`` when left, and yields a counter that
the tool ``state`` counts up and answers (``pool 1``, ``pool 2``...). It exits when stdin ends.
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from mcpbind import Context, McpError, Server
from mcpbind.protocol.errors import INVALID_REQUEST
from mcpbind.runtime.middleware import CallNext, IncomingRequest, Middleware


class Refuse(Middleware):
    async def on_request(self, request: IncomingRequest[Any, Any], call_next: CallNext) -> Any:
        if request.method == "tools/call" and request.params.name == "secret":
            raise McpError(INVALID_REQUEST, "not for you")
        return await call_next(request)


def build(marker: Path) -> Server:
    @asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[dict[str, int]]:
        with marker.open("a") as file:
            file.write("entered\n")
        try:
            yield {"calls": 0}
        finally:
            with marker.open("a") as file:
                file.write("exited\n")

    server = Server("middleware-peer", "0.0.1", middleware=[Refuse()], lifespan=lifespan)

    @server.tool()
    def secret() -> str:
        return "the secret"

    @server.tool()
    def state(ctx: Context) -> str:
        counter: dict[str, int] = ctx.lifespan_state
        counter["calls"] += 1
        return f"pool {counter['calls']}"

    return server


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    parser.add_argument("--marker", type=Path, required=True)
    args = parser.parse_args()
    anyio.run(build(args.marker).run_stdio, backend=args.backend)


if __name__ == "__main__":
    main()
