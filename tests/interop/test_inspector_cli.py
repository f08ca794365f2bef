"""The MCP Inspector's command-line client (``@modelcontextprotocol/inspector-cli``, on the
official TypeScript SDK) drives ``examples/everything.py`` over stdio: it lists and calls tools,
reads resources and gets prompts, and each test checks the JSON it prints.

The CLI is installed with npm into ``.conformance/inspector`` (kept out of git) on first use.
Without node and npm these tests are skipped, except in CI (``CI=true``), where they fail.
Each call is a pair of subprocesses, so nothing here needs an event loop.
"""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import subprocess
import sys
import wave
from pathlib import Path
from typing import Any, NoReturn

import pytest

from tests.harness import child_env

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / "examples" / "everything.py"
INSTALL = ROOT / ".conformance" / "inspector"
# The CLI and the SDK under it, pinned so that every machine runs the same client.
PACKAGES = ("@modelcontextprotocol/inspector-cli@1.0.3", "@modelcontextprotocol/sdk@1.32.2")
BUILD = INSTALL / "node_modules" / "@modelcontextprotocol" / "inspector-cli" / "build"
IN_CI = os.environ.get("CI", "").lower() == "true"
CALL_TIMEOUT = 60

PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="


def unavailable(reason: str) -> NoReturn:
    if IN_CI:
        pytest.fail(f"the Inspector CLI must run in CI: {reason}")
    pytest.skip(reason)


def install() -> None:
    npm = shutil.which("npm")
    if npm is None:
        unavailable("npm is not installed")
    INSTALL.mkdir(parents=True, exist_ok=True)
    manifest = INSTALL / "package.json"
    if not manifest.exists():
        manifest.write_text('{"name": "mcpbind-inspector-cli", "private": true}\n')
    env = {
        **os.environ,
        "npm_config_cache": str(INSTALL.parent / ".npm-cache"),
        "npm_config_update_notifier": "false",
        "npm_config_fund": "false",
        "npm_config_audit": "false",
    }
    try:
        done = subprocess.run(
            [npm, "install", "--silent", *PACKAGES],
            cwd=INSTALL,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    except subprocess.TimeoutExpired:
        unavailable("npm install took more than 300 s")
    if done.returncode != 0:
        unavailable(f"npm install failed: {done.stderr.strip()[-2000:]}")


@pytest.fixture(scope="module")
def node() -> str:
    """The node executable, with the CLI installed for it."""
    return installed_cli()


def installed_cli() -> str:
    """The node executable, with the CLI installed for it (in ``BUILD``) on first use."""
    found = shutil.which("node")
    if found is None:
        unavailable("node is not installed")
    version = subprocess.run([found, "--version"], capture_output=True, text=True, check=True).stdout
    if int(version.strip().lstrip("v").split(".")[0]) < 20:
        unavailable(f"the Inspector CLI needs Node 20 or newer, not {version.strip()}")
    if not (BUILD / "index.js").is_file():
        install()
    assert (BUILD / "index.js").is_file(), f"npm installed no {BUILD / 'index.js'}"
    return found


def run_cli(node: str, *args: str) -> subprocess.CompletedProcess[str]:
    # The CLI finds its own package.json relative to the working directory: run it in build/.
    return subprocess.run(
        [node, "index.js", sys.executable, str(EVERYTHING), *args],
        cwd=BUILD,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=CALL_TIMEOUT,
        check=False,
    )


def inspect(node: str, *args: str) -> Any:
    """What the CLI prints for one method call, parsed."""
    done = run_cli(node, *args)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stderr}"
    return json.loads(done.stdout)


def test_list_tools(node: str) -> None:
    listing = inspect(node, "--method", "tools/list")
    assert "nextCursor" not in listing
    tools = {tool["name"]: tool for tool in listing["tools"]}
    assert list(tools) == ["add", "weather", "countdown", "image", "tone", "write_note"]
    assert tools["add"]["description"] == "Add two integers."
    assert tools["add"]["inputSchema"] == {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "b": {"type": "integer", "description": "The second addend", "default": 0},
        },
        "required": ["a"],
    }
    assert tools["add"]["outputSchema"] == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
    assert tools["add"]["annotations"] == {"readOnlyHint": True}
    assert tools["weather"]["title"] == "Weather report"
    assert tools["weather"]["description"] == "Made-up weather for a city, as structured output."
    assert tools["weather"]["inputSchema"]["properties"] == {
        "city": {"type": "string", "description": "The city's name, in any language."}
    }
    assert tools["countdown"]["inputSchema"]["properties"] == {"start": {"type": "integer"}}
    assert "outputSchema" not in tools["image"] and "outputSchema" not in tools["tone"]
    assert tools["tone"]["inputSchema"]["properties"]["hertz"] == {
        "type": "integer",
        "description": "The pitch.",
        "default": 440,
    }
    assert tools["write_note"]["inputSchema"]["required"] == ["name", "text"]


def test_call_tools(node: str) -> None:
    # The TypeScript SDK checks structuredContent against the listed outputSchema.
    added = inspect(node, "--method", "tools/call", "--tool-name", "add", "--tool-arg", "a=2", "b=40")
    assert added == {
        "content": [{"type": "text", "text": '{"result":42}'}],
        "structuredContent": {"result": 42},
    }
    weather = inspect(node, "--method", "tools/call", "--tool-name", "weather", "--tool-arg", "city=Oslo")
    assert weather["structuredContent"] == {"city": "Oslo", "celsius": 21.5, "conditions": "sunny"}
    assert weather.get("isError", False) is False
    countdown = inspect(node, "--method", "tools/call", "--tool-name", "countdown", "--tool-arg", "start=2")
    assert countdown == {"content": [{"type": "text", "text": "liftoff"}]}
    saved = inspect(
        node,
        "--method",
        "tools/call",
        "--tool-name",
        "write_note",
        "--tool-arg",
        "name=x",
        "text=hello there",
    )
    assert saved == {"content": [{"type": "text", "text": "saved x"}]}


def test_call_tools_with_media(node: str) -> None:
    image = inspect(node, "--method", "tools/call", "--tool-name", "image")
    assert image == {"content": [{"type": "image", "data": PIXEL, "mimeType": "image/png"}]}
    tone = inspect(node, "--method", "tools/call", "--tool-name", "tone", "--tool-arg", "milliseconds=25")
    caption, sound = tone["content"]
    assert caption == {"type": "text", "text": "440 Hz for 25 ms"}
    assert sound["type"] == "audio" and sound["mimeType"] == "audio/wav"
    with wave.open(io.BytesIO(base64.b64decode(sound["data"]))) as wav:
        assert (wav.getnchannels(), wav.getframerate(), wav.getnframes()) == (1, 8000, 200)


def test_tool_errors(node: str) -> None:
    # "42" reaches the server as the number 42: at 2025-11-25 a bad argument is a tool error.
    bad = inspect(node, "--method", "tools/call", "--tool-name", "weather", "--tool-arg", "city=42")
    assert bad["isError"] is True
    assert bad["content"] == [
        {
            "type": "text",
            "text": "Invalid arguments for tool weather: Expected `str`, got `int` - at `arguments.city`",
        }
    ]
    # An unknown tool is a protocol error, which the CLI reports with a non-zero exit.
    unknown = run_cli(node, "--method", "tools/call", "--tool-name", "nope")
    assert unknown.returncode != 0
    assert "-32602" in unknown.stderr and "Unknown tool: nope" in unknown.stderr


def test_resources(node: str) -> None:
    listing = inspect(node, "--method", "resources/list")
    assert listing["resources"] == [
        {
            "uri": "notes://index",
            "name": "index",
            "description": "The names of all notes.",
            "mimeType": "application/json",
        }
    ]
    templates = inspect(node, "--method", "resources/templates/list")
    assert templates["resourceTemplates"] == [
        {"uriTemplate": "notes://{name}", "name": "note", "description": "One note, by name"}
    ]
    index = inspect(node, "--method", "resources/read", "--uri", "notes://index")
    assert index == {
        "contents": [{"uri": "notes://index", "mimeType": "application/json", "text": '["speed","welcome"]'}]
    }
    note = inspect(node, "--method", "resources/read", "--uri", "notes://speed")
    assert note == {
        "contents": [
            {"uri": "notes://speed", "mimeType": "text/plain", "text": "msgspec structs all the way down."}
        ]
    }


def test_prompts(node: str) -> None:
    listing = inspect(node, "--method", "prompts/list")
    prompts = {prompt["name"]: prompt for prompt in listing["prompts"]}
    assert list(prompts) == ["summarize", "describe_pixel"]
    assert prompts["summarize"] == {
        "name": "summarize",
        "title": "Summarize a note",
        "description": "Ask for a summary of one note.",
        "arguments": [
            {"name": "name", "description": "The note's name.", "required": True},
            {
                "name": "style",
                "description": "How to summarize: short, detailed or bullet points.",
                "required": False,
            },
        ],
    }
    got = inspect(
        node,
        "--method",
        "prompts/get",
        "--prompt-name",
        "summarize",
        "--prompt-args",
        "name=speed",
        "style=detailed",
    )
    assert got == {
        "description": "Ask for a summary of one note.",
        "messages": [
            {
                "role": "user",
                "content": {
                    "type": "text",
                    "text": "Give a detailed summary of this note: msgspec structs all the way down.",
                },
            }
        ],
    }
    pixel = inspect(node, "--method", "prompts/get", "--prompt-name", "describe_pixel")
    assert pixel["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "What does this picture show?"}},
        {"role": "user", "content": {"type": "image", "data": PIXEL, "mimeType": "image/png"}},
        {"role": "assistant", "content": {"type": "text", "text": "It shows"}},
    ]
    # A missing required argument is a protocol error.
    missing = run_cli(node, "--method", "prompts/get", "--prompt-name", "summarize")
    assert missing.returncode != 0 and "-32602" in missing.stderr


def test_set_logging_level(node: str) -> None:
    # The CLI accepts only some of MCP's levels (its own list: trace, debug, info, warn, error).
    assert inspect(node, "--method", "logging/setLevel", "--log-level", "error") == {}
