"""The mcpbind command: serve a server file over stdio, call it, print JSON, exit codes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

import mcpbind
from tests.cli_harness import run_mcpbind

SERVER_FILE = Path(__file__).parent / "peers" / "cli_server.py"


SERVE = f"{sys.executable} -m mcpbind serve {SERVER_FILE}"


def call(*args: str) -> tuple[int, Any]:
    done = run_mcpbind("call", SERVE, *args)
    return done.returncode, json.loads(done.stdout) if done.stdout else done.stderr


def test_tools() -> None:
    code, tools = call("tools/list")
    assert code == 0
    assert [t["name"] for t in tools] == ["add", "fail"]
    assert tools[0]["inputSchema"]["properties"] == {"a": {"type": "integer"}, "b": {"type": "integer"}}
    code, result = call("tools/call", "add", "--arg", "a=2", "--arg", "b=40")
    assert code == 0 and result["structuredContent"] == {"result": 42}
    code, result = call("tools/call", "add", "--json", '{"a": 1, "b": 2}')
    assert code == 0 and result["structuredContent"] == {"result": 3}
    code, result = call("tools/call", "fail")
    assert code == 1 and result["isError"] is True


def test_resources_and_prompts() -> None:
    code, resources = call("resources/list")
    assert code == 0 and [r["uri"] for r in resources] == ["config://app"]
    code, read = call("resources/read", "config://app")
    assert code == 0 and read["contents"][0]["text"] == "retries=3"
    code, prompt = call("prompts/get", "hello", "--arg", "name=ada")
    assert code == 0 and prompt["messages"][0]["content"]["text"] == "hello ada"
    code, error = call("resources/read", "missing://x")
    assert code == 1 and "-32602" in error  # (2026-07-28, which the CLI negotiates: invalid params)


def test_bad_usage() -> None:
    assert run_mcpbind("call", SERVE, "tools/call", "add", "--arg", "a").returncode != 0
    assert run_mcpbind("serve", "no/such/file.py").returncode != 0
    assert run_mcpbind("serve", str(SERVER_FILE), "--transport", "carrier-pigeon").returncode == 2


def test_version() -> None:
    done = run_mcpbind("--version")
    assert done.returncode == 0
    assert done.stdout == f"mcpbind {mcpbind.__version__}\n"


@pytest.mark.parametrize(
    ("args", "options"),
    [
        ([], ["--version"]),
        (["serve"], ["--host HOST", "--port PORT", "--transport {stdio,http}", "--backend {asyncio,trio}"]),
        (["call"], ["--timeout SECONDS", "--json OBJECT", "--backend {asyncio,trio}"]),
    ],
)
def test_help_explains_each_option_in_plain_text(args: list[str], options: list[str]) -> None:
    done = run_mcpbind(*args, "--help")
    assert done.returncode == 0
    assert "`" not in done.stdout  # no reStructuredText markup
    for option in options:
        described = done.stdout.split(f"  {option}", 1)[1].lstrip(" \n")
        assert described and not described.startswith("-"), f"{option} has no help:\n{done.stdout}"


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_call_on_either_backend(backend: str) -> None:
    serve = f"{sys.executable} -m mcpbind serve {SERVER_FILE} --backend {backend}"
    done = run_mcpbind(
        "call", serve, "tools/call", "add", "--arg", "a=2", "--arg", "b=40", "--backend", backend
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["structuredContent"] == {"result": 42}


def test_protocol_version_pin() -> None:
    # Negotiated (2026-07-28 with an mcpbind server): the server names itself in the result.
    code, result = call("tools/call", "add", "--arg", "a=1", "--arg", "b=1")
    assert code == 0 and "io.modelcontextprotocol/serverInfo" in result["_meta"]
    # Pinned to a handshake version: a session, whose results carry no such _meta.
    code, result = call(
        "tools/call", "add", "--arg", "a=1", "--arg", "b=1", "--protocol-version", "2025-06-18"
    )
    assert code == 0 and result["structuredContent"] == {"result": 2} and "_meta" not in result
    code, error = call("tools/list", "--protocol-version", "1999-01-01")
    assert code == 2 and "not one of the versions mcpbind speaks" in error
