"""The event loop ``mcpbind serve`` and ``run_*_sync`` run on: over HTTP, uvloop under asyncio when
it can be imported, asyncio's own loop when it cannot or ``--loop asyncio`` says so; over stdio,
asyncio's loop unless ``--loop uvloop`` says so; trio's with ``--backend trio``; a clear line when
uvloop is asked for and missing."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from mcpbind.event_loop import LoopUnavailable, backend_options
from tests.cli_harness import free_port, mcpbind_command, run_mcpbind, stop, wait_listening
from tests.harness import child_env

LOOP_SERVER = str(Path(__file__).parent / "peers" / "loop_server.py")

pytest.importorskip("uvloop")


@pytest.fixture(scope="module")
def no_uvloop(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A child environment where ``import uvloop`` fails (a package of that name that raises)."""
    blocked = tmp_path_factory.mktemp("no_uvloop")
    (blocked / "uvloop").mkdir()
    (blocked / "uvloop" / "__init__.py").write_text("raise ImportError('uvloop blocked by the test')\n")
    env = child_env()
    env["PYTHONPATH"] = f"{blocked}:{env.get('PYTHONPATH', '')}"
    return env


def loop_of(serve_command: str, env: dict[str, str] | None = None) -> str:
    """What the loop tool of the server ``serve_command`` starts (over stdio) answers."""
    done = run_mcpbind("call", serve_command, "tools/call", "loop", env=env)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["content"][0]["text"])


@contextmanager
def serving_http(*args: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """``mcpbind serve LOOP_SERVER --transport http ARGS`` on a free port: its URL."""
    port = free_port()
    command = mcpbind_command("serve", LOOP_SERVER, "--transport", "http", "--port", str(port), *args)
    process = subprocess.Popen(
        command,
        env=env or child_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(process)


def test_backend_options() -> None:
    assert backend_options("asyncio", "auto") == {"use_uvloop": True}
    assert backend_options("asyncio", "uvloop") == {"use_uvloop": True}
    assert backend_options("asyncio", "asyncio") == {}
    assert backend_options("asyncio", "auto", prefer_uvloop=False) == {}
    assert backend_options("asyncio", "uvloop", prefer_uvloop=False) == {"use_uvloop": True}
    assert backend_options("trio", "auto") == {} and backend_options("trio", "asyncio") == {}
    with pytest.raises(LoopUnavailable, match="cannot run under trio"):
        backend_options("trio", "uvloop")
    with pytest.raises(ValueError, match="loop must be one of"):
        backend_options("asyncio", "tokio")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([], "uvloop"),
        (["--loop", "asyncio"], "asyncio"),
        (["--backend", "trio"], "trio"),
    ],
)
def test_serve_http_loop(args: list[str], expected: str) -> None:
    with serving_http(*args) as url:
        assert loop_of_url(url) == expected


def loop_of_url(url: str) -> str:
    done = run_mcpbind("call", url, "tools/call", "loop")
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["content"][0]["text"])


def test_serve_http_without_uvloop(no_uvloop: dict[str, str]) -> None:
    """uvloop that cannot be imported: asyncio's loop (auto), or one line and exit code 2."""
    with serving_http(env=no_uvloop) as url:
        assert loop_of_url(url) == "asyncio"
    done = run_mcpbind(
        "serve", LOOP_SERVER, "--transport", "http", "--port", "0", "--loop", "uvloop", env=no_uvloop
    )
    assert done.returncode == 2
    assert done.stderr.startswith("mcpbind: --loop uvloop: uvloop was asked for but cannot be imported")
    assert len(done.stderr.splitlines()) == 1, done.stderr


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_serve_stdio_loop(backend: str) -> None:
    serve = mcpbind_command("serve", LOOP_SERVER, "--backend", backend)
    if backend == "trio":
        assert loop_of(shlex.join(serve)) == "trio"
        done = run_mcpbind("serve", LOOP_SERVER, "--backend", backend, "--loop", "uvloop")
        assert done.returncode == 2 and "uvloop is an asyncio loop" in done.stderr
        return
    assert loop_of(shlex.join(serve)) == "asyncio"  # (auto: uvloop is no faster over stdio)
    assert loop_of(shlex.join([*serve, "--loop", "uvloop"])) == "uvloop"


@pytest.mark.parametrize(
    ("backend", "loop", "expected"),
    [("asyncio", "auto", "asyncio"), ("asyncio", "uvloop", "uvloop")],
)
def test_run_stdio_sync_loop(backend: str, loop: str, expected: str) -> None:
    assert loop_of(shlex.join([sys.executable, LOOP_SERVER, backend, loop])) == expected


def test_proxy_loop_option() -> None:
    done = run_mcpbind(
        "proxy", "--backend", "trio", "--loop", "uvloop", "--port", "0", "--", sys.executable, LOOP_SERVER
    )
    assert done.returncode == 2 and "uvloop is an asyncio loop" in done.stderr
