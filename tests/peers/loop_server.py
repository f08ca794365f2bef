"""A server for the event-loop tests: its one tool says which event loop runs it. Run as a
script (``loop_server.py BACKEND LOOP``), it serves stdio with ``run_stdio_sync``."""

import sys

import sniffio

from mcpbind.server.server import Server

server = Server("loop-demo", "1.0")


@server.tool()
async def loop() -> str:
    """``trio``, or the module of the running asyncio loop's class (``uvloop``, ``asyncio``)."""
    if sniffio.current_async_library() == "trio":
        return "trio"
    import asyncio

    return type(asyncio.get_running_loop()).__module__.split(".")[0]


if __name__ == "__main__":
    server.run_stdio_sync(sys.argv[1], sys.argv[2])
