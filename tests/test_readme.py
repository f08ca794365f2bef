"""Every snippet and command of README.md, run as a reader runs them.

Each ```python block is checked with ``mypy --strict`` (the project's configuration) and run.
A block whose first line is ``# NAME.py`` is that file: the test writes it into a folder of its
own and uses it where the README does (a server imported and exercised in memory, started by a
client over stdio, served over HTTP by the ways the README shows; a client run against it).
A block without a name is a script, run as it is; it may define no server or ``main()``, which
would have nothing to run them. A named block the test does not know, a command line
(``mcpbind ...``, ``uvicorn ...``) it does not run, or one it runs that the README lost, fails the
test: nothing is skipped silently.
"""

from __future__ import annotations

import json
import os
import re
import runpy
import shlex
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, cast

import anyio
import pytest

from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.protocol.errors import McpError
from mcpbind.schema.v2025_11_25 import TextContent, TextResourceContents
from mcpbind.server.server import Server
from tests.cli_harness import free_port, wait_listening
from tests.harness import child_env, connected, source_roots
from tests.mypy_run import run_mypy

README = Path(__file__).parent.parent / "README.md"
PYPROJECT = Path(__file__).parent.parent / "pyproject.toml"
PORT_IN_README = "8000"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", text, flags=re.MULTILINE | re.DOTALL)


def block_name(block: str) -> str | None:
    match = re.match(r"# (\w+\.py)\n", block)
    return match.group(1) if match else None


def commands(text: str) -> set[str]:
    """The README's command lines for mcpbind and uvicorn (indented code), without comments."""
    found = re.findall(r"^    ((?:mcpbind|uvicorn) .*?)(?:\s+#.*)?$", text, flags=re.MULTILINE)
    return set(found)


BLOCKS = python_blocks(README.read_text(encoding="utf-8"))
NAMED = {name: block for block in BLOCKS if (name := block_name(block))}
SCRIPTS = [block for block in BLOCKS if block_name(block) is None]

# What each named block is, and how the tests below use it.
# In memory and over stdio, as programs:
SERVERS = {"server.py", "echo_server.py", "handlers.py", "guarded.py"}
KNOWN = {*SERVERS, "client.py", "app.py", "url_client.py"}

SERVE_COMMAND = "mcpbind serve server.py"
CALL_COMMAND = 'mcpbind call "python server.py" tools/call add --arg a=2 --arg b=40'
HTTP_SERVE_COMMANDS = {
    "mcpbind serve server.py --transport http --port 8000",
    "mcpbind proxy --port 8000 -- python server.py",
    "uvicorn app:app --port 8000",
}
HTTP_CALL_COMMAND = "mcpbind call http://127.0.0.1:8000/mcp tools/call add --arg a=2 --arg b=40"


def test_every_block_and_command_is_covered() -> None:
    assert len(BLOCKS) == len(NAMED) + len(SCRIPTS), "two blocks have the same name"
    assert set(NAMED) == KNOWN, "a named block this test does not run, or one the README lost"
    for script in SCRIPTS:
        assert not re.search(r"^(server = |async def main)", script, re.MULTILINE), (
            f"an unnamed block defines a server or main(), which nothing would run:\n{script}"
        )
    assert SCRIPTS, "the README lost its scripts"
    assert commands(README.read_text(encoding="utf-8")) == {
        SERVE_COMMAND,
        CALL_COMMAND,
        *HTTP_SERVE_COMMANDS,
        HTTP_CALL_COMMAND,
    }


def write_blocks(folder: Path, port: int | None = None) -> Path:
    """Every named block as its file in ``folder`` (the README's port replaced by ``port``), and
    ``folder/bin`` with the commands the README runs (``python``, ``mcpbind``, ``uvicorn``)."""
    for name, block in NAMED.items():
        if port is not None:
            block = block.replace(PORT_IN_README, str(port))
        (folder / name).write_text(block, encoding="utf-8")
    bin_dir = folder / "bin"
    bin_dir.mkdir(exist_ok=True)
    for command, run in [("python", ""), ("mcpbind", " -m mcpbind"), ("uvicorn", " -m uvicorn")]:
        shim = bin_dir / command
        shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)}{run} "$@"\n')
        shim.chmod(0o755)
    return bin_dir


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The named blocks written out, as the current directory, with their commands on PATH."""
    bin_dir = write_blocks(tmp_path)
    for key, value in child_env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_blocks_pass_mypy_strict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_blocks(tmp_path)
    files = [str(tmp_path / name) for name in NAMED]
    for number, script in enumerate(SCRIPTS):
        path = tmp_path / f"readme_script_{number}.py"
        path.write_text(script, encoding="utf-8")
        files.append(str(path))
    monkeypatch.setenv("MYPYPATH", os.pathsep.join([*source_roots(), str(tmp_path)]))
    monkeypatch.chdir(tmp_path)
    out, err, status = run_mypy(["--config-file", str(PYPROJECT), "--strict", "--no-incremental", *files])
    assert (status, err) == (0, ""), out + err
    assert out.startswith(f"Success: no issues found in {len(files)} source files"), out


@pytest.mark.parametrize("number", range(len(SCRIPTS)))
def test_scripts_run(number: int, folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = folder / f"readme_script_{number}.py"
    path.write_text(SCRIPTS[number], encoding="utf-8")
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out  # each script shows what it did


def load_server(folder: Path, name: str) -> Server:
    server = runpy.run_path(str(folder / name), run_name=name.removesuffix(".py"))["server"]
    assert isinstance(server, Server)
    return server


async def check_server(name: str, session: RemoteServer) -> None:
    """What each server block of the README answers."""
    if name == "server.py":
        result = await session.call_tool("add", {"a": 2, "b": 40})
        assert result.structured_content == {"result": 42}
        read = await session.read_resource("notes://groceries")
        assert read.contents == [
            TextResourceContents(
                uri="notes://groceries", text="the note called groceries", mime_type="text/plain"
            )
        ]
    elif name == "echo_server.py":
        result = await session.call_tool("echo", {"text": "hi"})
        assert result.content == [TextContent(text="{'text': 'hi'}")]
    elif name == "guarded.py":
        assert (await session.call_tool("visit")).structured_content == {"result": 1}
        with pytest.raises(McpError, match="reset is not allowed"):
            await session.call_tool("reset")
        assert (await session.call_tool("visit")).structured_content == {"result": 2}
    else:
        assert name == "handlers.py"
        result = await session.call_tool("greet")
        assert result.content == [TextContent(text="greet")]


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(SERVERS))
async def test_servers_in_memory(name: str, folder: Path, anyio_backend: str) -> None:
    async with connected(load_server(folder, name)) as session:
        await check_server(name, session)


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(SERVERS))
async def test_servers_over_stdio(name: str, folder: Path, anyio_backend: str) -> None:
    """Each server block is a program: ``python NAME`` serves it over stdio."""
    async with Client("readme", "1.0").connect_stdio("python", [name], timeout=30) as session:
        await check_server(name, session)


async def run_main(folder: Path, name: str) -> None:
    main = cast(Callable[[], Awaitable[None]], runpy.run_path(str(folder / name), run_name=name)["main"])
    with anyio.fail_after(60):
        await main()


@pytest.mark.anyio
async def test_stdio_client(folder: Path, anyio_backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    await run_main(folder, "client.py")
    assert capsys.readouterr().out == "[TextContent(text=\"{'text': 'hi'}\")]\n"


@pytest.mark.anyio
async def test_serve_command(folder: Path, anyio_backend: str) -> None:
    (command, *args) = shlex.split(SERVE_COMMAND)
    async with Client("readme", "1.0").connect_stdio(command, args, timeout=30) as session:
        await check_server("server.py", session)


def run_command(line: str, folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        line, shell=True, cwd=folder, capture_output=True, text=True, timeout=60, check=False
    )


def test_call_command(folder: Path) -> None:
    done = run_command(CALL_COMMAND, folder)
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout)["structuredContent"] == {"result": 42}


@pytest.fixture(params=["python app.py", *sorted(HTTP_SERVE_COMMANDS)])
def http_server(request: pytest.FixtureRequest, folder: Path) -> Iterator[tuple[Path, int]]:
    """The README's server.py served over HTTP on a free port, each way the README shows."""
    port = free_port()
    write_blocks(folder, port)
    line: str = request.param.replace(PORT_IN_README, str(port))
    serving = subprocess.Popen(
        shlex.split(line),
        cwd=folder,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_listening(port, serving)
        yield folder, port
    finally:
        serving.kill()
        serving.communicate(timeout=30)


@pytest.mark.anyio
async def test_url_client(
    http_server: tuple[Path, int], anyio_backend: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, _ = http_server
    await run_main(folder, "url_client.py")
    assert capsys.readouterr().out == "['add']\n"


def test_call_command_over_http(http_server: tuple[Path, int]) -> None:
    folder, port = http_server
    done = run_command(HTTP_CALL_COMMAND.replace(PORT_IN_README, str(port)), folder)
    assert (done.returncode, done.stderr) == (0, "")
    result: dict[str, Any] = json.loads(done.stdout)
    assert result["structuredContent"] == {"result": 42}
