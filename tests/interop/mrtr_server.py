"""An mcpbind stdio server whose tool asks the client twice (an elicitation, then sampling),
for the official SDK's client to drive in both eras (tests/interop/test_official_client_mrtr.py).

    python tests/interop/mrtr_server.py --backend asyncio|trio
"""

from __future__ import annotations

import argparse

import anyio
import msgspec

from mcpbind import Context, Server, types
from mcpbind.server.elicitation import elicit_form


class Name(msgspec.Struct):
    name: str


server = Server("mcpbind-mrtr", "1.0")


@server.tool()
async def greet(language: str, ctx: Context) -> str:
    """Asks the user's name, then has the client's model greet them in ``language``."""
    outcome = await elicit_form(ctx, "Your name?", Name)
    if outcome.value is None:
        return f"no name ({outcome.action})"
    params = types.CreateMessageRequestParams(
        messages=[
            types.SamplingMessage(
                role="user", content=types.TextContent(text=f"Greet {outcome.value.name} in {language}")
            )
        ],
        max_tokens=20,
    )
    sampled = await ctx.create_message(params)
    assert isinstance(sampled, types.CreateMessageResult) and isinstance(sampled.content, types.TextContent)
    return f"{sampled.content.text} (model {sampled.model}, protocol {ctx.protocol_version})"


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    anyio.run(server.run_stdio, backend=parser.parse_args().backend)
