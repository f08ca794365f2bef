"""A demo server that uses every feature mcpbind has so far: tools (plain, structured,
with progress and logging, images and audio), resources, a resource template and
subscriptions, prompts (with an image), completion, and parameter descriptions from
docstrings.

    mcpbind serve examples/everything.py          # over stdio
    python examples/demo.py                       # starts it and talks to it
"""

from __future__ import annotations

import base64
import io
import math
import struct
import wave
from typing import Annotated

import anyio
import msgspec

from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.media import Audio, Image
from mcpbind.server.prompts import assistant_message, user_message
from mcpbind.server.server import Server

server = Server(
    "mcpbind-everything",
    "0.1.0",
    title="mcpbind everything demo",
    instructions="A demo of every feature: try the tools, read the resources, get the prompts.",
    logging=True,  # countdown sends log messages
)

NOTES = {"welcome": "Welcome to mcpbind.", "speed": "msgspec structs all the way down."}
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="
)


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
    """Made-up weather for a city, as structured output.

    Args:
        city: The city's name, in any language.
    """
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
def image() -> Image:
    """A one-pixel PNG."""
    return Image(PIXEL)  # image/png, told by the bytes


@server.tool()
def tone(hertz: int = 440, milliseconds: int = 100) -> list[str | Audio]:
    """A sine tone as a WAV file, with a caption.

    Parameters
    ----------
    hertz
        The pitch.
    milliseconds
        The length, at most one second.
    """
    rate = 8000
    count = rate * min(milliseconds, 1000) // 1000
    samples = (int(12000 * math.sin(2 * math.pi * hertz * i / rate)) for i in range(count))
    out = io.BytesIO()
    with wave.open(out, "wb") as sound:
        sound.setnchannels(1)
        sound.setsampwidth(2)
        sound.setframerate(rate)
        sound.writeframes(b"".join(struct.pack("<h", sample) for sample in samples))
    return [f"{hertz} Hz for {milliseconds} ms", Audio(out.getvalue())]


@server.tool()
async def write_note(name: str, text: str) -> str:
    """Write a note; clients subscribed to it (or to the index) are told.

    :param name: The note's name.
    :param text: What it says.
    """
    is_new = name not in NOTES
    NOTES[name] = text
    if is_new:
        await server.resource_updated("notes://index")
    await server.resource_updated(f"notes://{name}")
    return f"saved {name}"


@server.resource("notes://index", mime_type="application/json")
def index() -> list[str]:
    """The names of all notes."""
    return sorted(NOTES)


@server.resource("notes://{name}", description="One note, by name")
def note(name: str) -> str:
    return NOTES.get(name, f"(no note named {name})")


@server.prompt(title="Summarize a note")
def summarize(name: str, style: str = "short") -> str:
    """Ask for a summary of one note.

    Args:
        name: The note's name.
        style: How to summarize: short, detailed or bullet points.
    """
    return f"Give a {style} summary of this note: {NOTES.get(name, '')}"


@server.prompt(title="Describe the pixel")
def describe_pixel() -> list[types.PromptMessage]:
    """Ask what a picture shows, with the answer begun."""
    return [
        user_message("What does this picture show?"),
        user_message(Image(PIXEL)),
        assistant_message("It shows"),
    ]


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
