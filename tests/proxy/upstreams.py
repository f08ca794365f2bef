"""The servers behind the proxy in tests/proxy: one mcpbind server of every feature the proxy
forwards, speaking the handshake versions only (2025) or the stateless one only (2026), and a
:class:`Probe` of what its handlers saw (the proxy's effects are checked where they land)."""

from __future__ import annotations

from collections import Counter
from typing import Final

import anyio
import msgspec

from mcpbind import Context, Server, types
from mcpbind.protocol.errors import McpError
from mcpbind.server.elicitation import elicit_form
from mcpbind.versions import HANDSHAKE_VERSIONS, MODERN_VERSIONS

__all__ = ["ERAS", "FAILURE", "FLOOD_LIMIT", "Name", "Probe", "build_upstream", "version_of"]

ERAS: Final = ("2025", "2026")
"""The eras of the protocol: the handshake versions (a session), and the stateless 2026-07-28."""

FAILURE: Final = McpError(-32077, "the upstream refuses", {"why": ["because", 1, None]})
"""What the ``fail`` tool raises, as it is to reach the client."""

FLOOD_LIMIT: Final = 4


def version_of(era: str) -> str:
    """The newest protocol version of ``era``."""
    return "2025-11-25" if era == "2025" else "2026-07-28"


class Name(msgspec.Struct):
    name: str


class Probe:
    """What the upstream server's handlers saw: how often each tool ran, whether a call was
    cancelled (``hang``, or ``ask`` waiting for its answer), how many calls of ``busy`` ran at
    once."""

    def __init__(self) -> None:
        self.runs: Counter[str] = Counter()
        self.hanging = anyio.Event()
        self.cancelled = anyio.Event()
        self.ask_cancelled = anyio.Event()
        self.busy_now = 0
        self.busy_most = 0
        self.all_busy = anyio.Event()


def build_upstream(era: str, probe: Probe) -> Server:
    """A server of ``era`` (``"2025"``: the handshake versions only; ``"2026"``: 2026-07-28
    only) with tools, a subscribable resource template and logging."""
    versions = tuple(HANDSHAKE_VERSIONS) if era == "2025" else tuple(sorted(MODERN_VERSIONS))
    server = Server("upstream", "1.2.3", versions=versions, logging=True, instructions="be nice")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Elicits a name, then samples a greeting for it (two questions mid-call)."""
        probe.runs["ask"] += 1
        try:
            outcome = await elicit_form(ctx, "Your name?", Name)
        except anyio.get_cancelled_exc_class():
            probe.ask_cancelled.set()
            raise
        if outcome.value is None:
            return f"no name ({outcome.action})"
        asked = types.CreateMessageRequestParams(
            messages=[types.SamplingMessage(role="user", content=types.TextContent(text="greet"))],
            max_tokens=10,
        )
        sampled = await ctx.create_message(asked)
        assert isinstance(sampled, types.CreateMessageResult)
        assert isinstance(sampled.content, types.TextContent)
        return f"{sampled.content.text} {outcome.value.name}"

    @server.tool()
    async def count(steps: int, ctx: Context) -> str:
        """Reports progress and logs each step."""
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
            await ctx.log("info", {"step": step}, logger="count")
        return "counted"

    @server.tool()
    async def hang() -> str:
        """Never answers; tells the probe when it starts and when it is cancelled."""
        probe.hanging.set()
        try:
            await anyio.sleep_forever()
        finally:
            probe.cancelled.set()
        return "unreachable"

    @server.tool()
    async def busy(n: int) -> int:
        """Counts the calls running at once; the first FLOOD_LIMIT wait until they all run."""
        probe.busy_now += 1
        probe.busy_most = max(probe.busy_most, probe.busy_now)
        try:
            if probe.busy_now >= FLOOD_LIMIT:
                probe.all_busy.set()
            with anyio.fail_after(10):
                await probe.all_busy.wait()
            await anyio.lowlevel.checkpoint()
        finally:
            probe.busy_now -= 1
        return n

    @server.tool()
    def fail() -> str:
        raise FAILURE

    @server.resource("notes://{name}")
    def note(name: str) -> str:
        return f"note {name}"

    return server
