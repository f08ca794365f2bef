"""What an event loop costs a stdio server: ``bench/raw_floor_server.py``'s echo loop on asyncio.

The same decoding and answers as the raw floor (msgspec, the listing encoded once), but stdin is
read when the asyncio event loop says it is readable (``loop.add_reader`` once, for the whole
run) and the answers to one read go out in one non-blocking write, as an asyncio server would do
it. No anyio, no tasks, no MCP framework: the gap between this and the blocking floor is the
event loop's own cost per wake-up, which every asyncio server pays (mcpbind, the official SDK,
FastMCP), and the gap between this and mcpbind is mcpbind's.

    python bench/asyncio_floor_server.py [--tools N] [--pin-cpu N]

Used by hand (``bench/stdio.py`` drives it as the ``asyncio-floor`` server); see bench/README.md.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: bench.raw_floor_server is imported from the root
    sys.path.insert(0, str(ROOT))

from bench.raw_floor_server import Answerer, parse_options  # noqa: E402


async def serve(extra_tools: int) -> None:
    loop = asyncio.get_running_loop()
    answerer = Answerer(extra_tools)
    done = loop.create_future()
    os.set_blocking(1, False)
    out = bytearray()

    def write_out() -> None:
        try:
            written = os.write(1, out)
        except BlockingIOError:
            written = 0
        del out[:written]
        if not out:
            loop.remove_writer(1)

    def readable() -> None:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            loop.remove_reader(0)
            if not done.done():
                done.set_result(None)
            return
        answers = answerer.feed(chunk)
        if answers:
            pending = bool(out)
            out.extend(answers)
            if not pending:
                write_out()
                if out:
                    loop.add_writer(1, write_out)

    loop.add_reader(0, readable)
    await done
    while out:
        await asyncio.sleep(0.001)


def main(argv: list[str] | None = None) -> None:
    asyncio.run(serve(parse_options(argv, "asyncio_floor_server.py")))


if __name__ == "__main__":
    main()
