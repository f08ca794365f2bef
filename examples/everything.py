"""A demo server that uses every feature mcpbind has so far: tools (plain, structured,
with progress and logging), resources and a resource template, prompts, completion.

    mcpbind serve examples/everything.py          # over stdio
    python examples/demo.py                       # starts it and talks to it
"""

from __future__ import annotations

from typing import Annotated

import anyio
import msgspec

from mcpbind.schema import v2025_11_25 as types
from mcpbind.server import Server
from mcpbind.session import RequestContext

server = Server(
    "mcpbind-everything",
    "0.1.0",
    title="mcpbind everything demo",
    instructions="A demo of every feature: try the tools, read the resources, get the prompts.",
)

NOTES = {"welcome": "Welcome to mcpbind.", "speed": "msgspec structs all the way down."}


class Weather(msgspec.Struct):
    city: str
    celsius: float
    conditions: str


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
def add(a: int, b: Annotated[int, msgspec.Meta(description="The second addend")] = 0) -> int:
    """Add two integers."""
    return a + b


@server.tool(title="Weather report")
async def weather(city: str) -> Weather:
    """Made-up weather for a city, as structured output."""
    return Weather(city=city, celsius=21.5, conditions="sunny")


@server.tool()
async def countdown(start: int, ctx: RequestContext) -> str:
    """Count down, reporting progress and logging each step."""
    for step in range(start, 0, -1):
        await ctx.report_progress(start - step + 1, start, f"{step}...")
        await ctx.log("info", {"countdown": step}, logger="everything")
        await anyio.sleep(0.01)
    return "liftoff"


@server.tool()
def image() -> types.ImageContent:
    """A one-pixel PNG."""
    pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="
    return types.ImageContent(data=pixel, mime_type="image/png")


@server.resource("notes://index", mime_type="application/json")
def index() -> list[str]:
    """The names of all notes."""
    return sorted(NOTES)


@server.resource("notes://{name}", description="One note, by name")
def note(name: str) -> str:
    return NOTES.get(name, f"(no note named {name})")


@server.prompt(title="Summarize a note")
def summarize(name: str, style: str = "short") -> str:
    """Ask for a summary of one note."""
    return f"Give a {style} summary of this note: {NOTES.get(name, '')}"


@server.completion()
async def complete(
    ref: types.PromptReference | types.ResourceTemplateReference,
    argument: str,
    value: str,
    context: dict[str, str],
) -> list[str]:
    if argument == "name":
        return [name for name in sorted(NOTES) if name.startswith(value)]
    if argument == "style":
        return [style for style in ("short", "detailed", "bullet points") if style.startswith(value)]
    return []


if __name__ == "__main__":
    server.run_stdio_sync()
