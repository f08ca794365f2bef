"""The mcpbind command when things go wrong, run as a user runs it (a subprocess): a missing
extra, a server without tools/list, --timeout, bad input, Ctrl-C. Each failure is one line on
stderr and a non-zero exit code; Ctrl-C stops ``serve`` quietly with 0 and ``call`` with 130."""

from __future__ import annotations

import json
import os
import select
import shlex
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli_harness import (
    free_port,
    mcpbind_command,
    mcpbind_serving,
    run_mcpbind,
    stop,
    wait_listening,
)
from tests.harness import child_env
from tests.http_harness import loopback_socket

PEERS = Path(__file__).parent / "peers"
CLI_SERVER = str(PEERS / "cli_server.py")
CALLS_ONLY = str(PEERS / "cli_calls_only_server.py")  # tools/call without tools/list
BACKENDS = ["asyncio", "trio"]

# Installed as sitecustomize ahead of everything else, this makes the modules listed in
# MCPBIND_TEST_HIDE unimportable, as in an environment without the extra that brings them.
HIDE_MODULES = """
import os
import sys


class HideModules:
    def __init__(self, names):
        self.names = names

    def find_spec(self, fullname, path=None, target=None):
        if fullname.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None


sys.meta_path.insert(0, HideModules(frozenset(os.environ["MCPBIND_TEST_HIDE"].split(","))))
"""


def _sigint_default() -> None:
    # A child inherits an ignored SIGINT (as from a shell's background job); Python then keeps
    # ignoring it. Ctrl-C at a terminal reaches a foreground process with the default handling.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def serve_command(target: str, backend: str = "asyncio") -> str:
    """The ``call`` argument starting ``mcpbind serve target`` over stdio."""
    return shlex.join(mcpbind_command("serve", target, "--backend", backend))


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    """The one line the command printed on stderr (failing the test when there are more)."""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("mcpbind: "), done.stderr
    return lines[0]


@pytest.fixture(scope="module", params=BACKENDS)
def served(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """(backend, URL): the calls-only server served by ``mcpbind serve --transport http``."""
    backend: str = request.param
    port = free_port()
    with mcpbind_serving(CALLS_ONLY, "--transport", "http", "--backend", backend, port=port):
        yield backend, f"http://127.0.0.1:{port}/mcp"


# Item 2: without an extra, say what to install.


@pytest.mark.parametrize(
    ("args", "hidden", "extra"),
    [
        (["serve", CLI_SERVER, "--transport", "http", "--port", "0"], "httpx,uvicorn,sniffio", "http"),
        (["serve", CLI_SERVER, "--transport", "http", "--port", "0", "--backend", "trio"], "trio", "trio"),
        (
            ["serve", CLI_SERVER, "--transport", "http", "--port", "0", "--backend", "trio"],
            "hypercorn",
            "trio",
        ),
        (["serve", CLI_SERVER, "--backend", "trio"], "trio", "trio"),
        (["call", "http://127.0.0.1:9/mcp", "tools/list"], "httpx", "http"),
        (["call", "http://127.0.0.1:9/mcp", "tools/list", "--backend", "trio"], "httpx", "http"),
    ],
)
def test_a_missing_extra_is_named_with_its_pip_command(
    tmp_path: Path, args: list[str], hidden: str, extra: str
) -> None:
    (tmp_path / "sitecustomize.py").write_text(HIDE_MODULES)
    env = child_env()
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    env["MCPBIND_TEST_HIDE"] = hidden
    done = run_mcpbind(*args, env=env)
    assert done.returncode == 1
    line = one_line(done)
    assert "No module named" in line
    assert f'pip install "mcpbind[{extra}]"' in line


# Item 4: --arg values without a tool listing.


@pytest.mark.parametrize("backend", BACKENDS)
def test_arguments_for_a_server_without_tools_list_are_read_as_json(backend: str) -> None:
    done = run_mcpbind(
        "call",
        serve_command(CALLS_ONLY, backend),
        "tools/call",
        "echo",
        *("--arg", "n=2", "--arg", "text=hi", "--arg", "flag=true", "--arg", "items=[1, 2]"),
        *("--backend", backend),
    )
    assert done.returncode == 0, done.stderr
    text = json.loads(done.stdout)["content"][0]["text"]
    assert json.loads(text) == {"n": 2, "text": "hi", "flag": True, "items": [1, 2]}


def test_arguments_for_a_server_without_tools_list_over_http(served: tuple[str, str]) -> None:
    backend, url = served
    done = run_mcpbind(
        "call", url, "tools/call", "echo", "--arg", "n=2", "--arg", "text=hi", "--backend", backend
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(json.loads(done.stdout)["content"][0]["text"]) == {"n": 2, "text": "hi"}


# Item 5: --timeout bounds the call.


@pytest.mark.parametrize("backend", BACKENDS)
def test_timeout_bounds_the_call(backend: str) -> None:
    server = serve_command(CALLS_ONLY, backend)
    done = run_mcpbind(
        "call", server, "tools/call", "wait", "--arg", "seconds=10", "--timeout", "2", "--backend", backend
    )
    assert done.returncode == 1
    assert one_line(done) == "mcpbind: tools/call wait: no answer within 2 s (--timeout)"
    assert done.stdout == ""


def test_timeout_bounds_the_call_over_http(served: tuple[str, str]) -> None:
    backend, url = served
    done = run_mcpbind(
        "call", url, "tools/call", "wait", "--arg", "seconds=10", "--timeout", "2", "--backend", backend
    )
    assert done.returncode == 1
    assert one_line(done) == "mcpbind: tools/call wait: no answer within 2 s (--timeout)"


# Item 6: one line, not a traceback.


def test_a_url_with_a_wrong_path(served: tuple[str, str]) -> None:
    backend, url = served
    wrong = url.replace("/mcp", "/wrong")
    done = run_mcpbind("call", wrong, "tools/list", "--backend", backend)
    assert done.returncode == 1
    line = one_line(done)
    assert line.startswith(f"mcpbind: cannot reach {wrong}: ")
    assert "404" in line


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("{bad", "mcpbind: --json is not valid JSON: Expecting property name"),
        ("[1,2]", "mcpbind: --json takes a JSON object, not [1,2]"),
    ],
)
def test_bad_json_arguments(given: str, said: str) -> None:
    done = run_mcpbind("call", serve_command(CLI_SERVER), "tools/call", "add", "--json", given)
    assert done.returncode == 2
    assert one_line(done).startswith(said)


def test_serving_a_module_that_does_not_exist() -> None:
    done = run_mcpbind("serve", "nosuchmodule")
    assert done.returncode == 1
    assert one_line(done) == "mcpbind: no module named 'nosuchmodule'"


def test_serving_a_factory_that_fails() -> None:
    done = run_mcpbind("serve", f"{CALLS_ONLY}:broken")
    assert done.returncode == 1
    line = one_line(done)
    assert "RuntimeError: this factory always fails" in line
    assert f"({CALLS_ONLY}:" in line  # where it failed


@pytest.mark.parametrize("backend", BACKENDS)
def test_serving_on_a_taken_port_is_one_line(backend: str) -> None:
    taken = loopback_socket()
    try:
        port = taken.getsockname()[1]
        done = run_mcpbind(
            "serve", CLI_SERVER, "--transport", "http", "--port", str(port), "--backend", backend
        )
    finally:
        taken.close()
    assert done.returncode == 1
    assert one_line(done).startswith(f"mcpbind: cannot serve on 127.0.0.1:{port}: ")


@pytest.mark.parametrize("backend", BACKENDS)
def test_ctrl_c_stops_a_stdio_server_quietly(backend: str) -> None:
    serving = subprocess.Popen(
        mcpbind_command("serve", CLI_SERVER, "--backend", backend),
        env=child_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_sigint_default,
    )
    assert serving.stdin is not None and serving.stdout is not None and serving.stderr is not None
    try:
        serving.stdin.write(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n')
        serving.stdin.flush()
        assert select.select([serving.stdout], [], [], 30)[0], "the server did not answer"
        assert json.loads(serving.stdout.readline()) == {"jsonrpc": "2.0", "id": 1, "result": {}}
        serving.send_signal(signal.SIGINT)  # stdin stays open: only the signal stops it
        assert serving.wait(timeout=30) == 0
        assert serving.stderr.read() == b""
    finally:
        stop(serving)
        serving.stdin.close()
        serving.stdout.close()
        serving.stderr.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_ctrl_c_stops_an_http_server_quietly(backend: str) -> None:
    port = free_port()
    serving = subprocess.Popen(
        mcpbind_command("serve", CLI_SERVER, "--transport", "http")
        + ["--port", str(port), "--backend", backend],
        env=child_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=_sigint_default,
    )
    assert serving.stderr is not None
    try:
        wait_listening(port, serving)
        serving.send_signal(signal.SIGINT)
        assert serving.wait(timeout=30) == 0
        log = serving.stderr.read().decode()
        assert "Traceback" not in log and "Error" not in log, log
    finally:
        stop(serving)
        serving.stderr.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_ctrl_c_stops_a_call_with_130(tmp_path: Path, backend: str) -> None:
    waiting = tmp_path / "waiting"
    env = child_env()
    env["MCPBIND_TEST_WAITING"] = str(waiting)  # the server's wait tool creates it
    calling = subprocess.Popen(
        mcpbind_command("call", serve_command(CALLS_ONLY, backend), "tools/call", "wait")
        + ["--json", '{"seconds": 60}', "--backend", backend],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_sigint_default,
    )
    try:
        deadline = time.monotonic() + 30
        while not waiting.exists():
            assert time.monotonic() < deadline and calling.poll() is None, "the call did not start"
            time.sleep(0.05)
        calling.send_signal(signal.SIGINT)
        out, err = calling.communicate(timeout=30)
        assert calling.returncode == 130
        assert (out, err) == (b"", b"")
    finally:
        stop(calling)
