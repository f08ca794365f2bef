"""Start examples/everything.py as a stdio server, use each feature once, print what happened.

python examples/demo.py [--backend asyncio|trio]       (or: nox -s demo)
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import anyio

import mcpbind
from mcpbind.client.client import Client
from mcpbind.schema import v2025_11_25 as types

HERE = Path(__file__).resolve().parent


def show(label: str, value: object) -> None:
    print(f"  {label:<28} {value}")


async def main() -> None:
    logs: list[str] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(f"{params.level}: {params.data}")

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        print(f"  {'progress':<28} {progress:g}/{total:g} {message or ''}")

    # From a source checkout the server needs the two source roots on its path.
    roots = [str(Path(p).parent) for p in mcpbind.__path__ if "-packages" not in p]
    env = {"PYTHONPATH": os.pathsep.join(roots)} if roots else None
    # It negotiates MCP 2026-07-28 with the server, where each request asks for its log messages.
    client = Client("mcpbind-demo", "0.1.0", logging=on_log, log_level="info")
    async with client.connect_stdio(
        sys.executable, [str(HERE / "everything.py")], env=env, timeout=30
    ) as session:
        print(f"connected to {session.server_info.title} ({session.protocol_version})")
        show("instructions", session.instructions)
        print("tools")
        for tool in await session.all_tools():
            show(tool.name, tool.description)
        show("add(2, 40)", (await session.call_tool("add", {"a": 2, "b": 40})).structured_content)
        show("weather(Lisbon)", (await session.call_tool("weather", {"city": "Lisbon"})).structured_content)
        show(
            "countdown(3)",
            (await session.call_tool("countdown", {"start": 3}, progress=on_progress)).content[0],
        )
        bad = await session.call_tool("add", {"a": "two"})
        show("add('two') is an error", f"{bad.is_error}: {bad.content[0]}")
        print("resources")
        for resource in await session.all_resources():
            show(resource.uri, (await session.read_resource(resource.uri)).contents[0])
        for template in await session.all_resource_templates():
            show(template.uri_template, (await session.read_resource("notes://speed")).contents[0])
        print("prompts")
        for prompt in await session.all_prompts():
            show(
                prompt.name, [a.name for a in prompt.arguments] if isinstance(prompt.arguments, list) else []
            )
        show(
            "summarize(welcome)",
            (await session.get_prompt("summarize", {"name": "welcome"})).messages[0].content,
        )
        completion = await session.complete(types.PromptReference(name="summarize"), "style", "b")
        show("complete style='b'", completion.completion.values)
        await session.ping()
        await anyio.sleep(0.05)
    print("log messages received")
    for line in logs:
        show("log", line)
    print("session closed")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    anyio.run(main, backend=parser.parse_args().backend)
