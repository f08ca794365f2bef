"""``mcpbind proxy`` as a user runs it: a stdio server (examples/everything.py) served over
Streamable HTTP and called with ``mcpbind call``; that URL served again on stdio (a proxy in
front of the proxy) to a client that launches it; and the command lines that cannot work, each
refused with one line."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from mcpbind import types
from tests.cli_harness import free_port, mcpbind_listening, run_mcpbind
from tests.harness import child_env
from tests.proxy.proxying import front_client
from tests.proxy.upstreams import ERAS

EVERYTHING = Path(__file__).resolve().parents[2] / "examples" / "everything.py"


@pytest.fixture(scope="module")
def proxy_url() -> Iterator[str]:
    """``mcpbind proxy --port P -- python examples/everything.py``, listening: its URL."""
    port = free_port()
    with mcpbind_listening("proxy", "--port", str(port), "--", sys.executable, str(EVERYTHING), port=port):
        yield f"http://127.0.0.1:{port}/mcp"


def test_mcpbind_call_through_the_proxy(proxy_url: str) -> None:
    for pin in ([], ["--protocol-version", "2025-11-25"]):  # (2026-07-28 unless pinned)
        added = run_mcpbind("call", proxy_url, "tools/call", "add", "--arg", "a=2", "--arg", "b=40", *pin)
        assert added.returncode == 0, added.stderr
        assert msgspec.json.decode(added.stdout)["structuredContent"] == {"result": 42}


@pytest.mark.anyio
@pytest.mark.parametrize("client_era", ERAS)
async def test_a_url_served_on_stdio(proxy_url: str, client_era: str) -> None:
    """``mcpbind proxy URL`` launched by a client, in front of the proxy above: progress and
    log messages come all the way through."""
    steps: list[float] = []
    logged: list[object] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        steps.append(done)

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(params.data)

    client = front_client(client_era, logging=on_log, log_level="info")
    command = ["-m", "mcpbind", "proxy", proxy_url]
    async with client.connect_stdio(sys.executable, command, env=child_env(), timeout=30) as remote:
        assert remote.server_info.name == "mcpbind-everything"
        if client_era == "2025":
            await remote.set_logging_level("info")
        result = await remote.call_tool("countdown", {"start": 3}, progress=on_progress)
        assert result.content[0].text == "liftoff"  # type: ignore[union-attr]
        # The log messages came before the answer, but their handler runs in the session's own
        # task, which the answer does not wait for: let it finish before the session closes.
        await remote.session.notifications_handled()
    assert steps == [1, 2, 3]
    assert logged == [{"countdown": 3}, {"countdown": 2}, {"countdown": 1}]


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    return lines[0]


def test_no_server_is_a_bad_command_line() -> None:
    refused = run_mcpbind("proxy")
    assert refused.returncode == 2
    assert one_line(refused.stderr) == "mcpbind: proxy: give a URL, or -- and the command of a stdio server"


def test_a_server_that_cannot_start_is_one_line() -> None:
    refused = run_mcpbind("proxy", "--port", str(free_port()), "--", "no-such-command-for-mcpbind")
    assert refused.returncode == 1
    line = one_line(refused.stderr)
    assert line.startswith("mcpbind: proxy: cannot start no-such-command-for-mcpbind: ")
    assert "No such file or directory" in line
    exits = run_mcpbind("proxy", "--port", str(free_port()), "--", sys.executable, "-c", "pass")
    assert exits.returncode == 1
    assert one_line(exits.stderr).startswith("mcpbind: proxy: cannot start ")


def test_a_url_that_cannot_be_reached_is_one_line() -> None:
    refused = run_mcpbind("proxy", f"http://127.0.0.1:{free_port()}/mcp")
    assert refused.returncode == 1
    assert one_line(refused.stderr).startswith("mcpbind: proxy: cannot reach http://127.0.0.1:")


def test_a_port_taken_is_one_line() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        refused = run_mcpbind("proxy", "--port", str(port), "--", sys.executable, str(EVERYTHING))
    assert refused.returncode == 1
    assert one_line(refused.stderr).startswith(f"mcpbind: proxy: cannot serve on 127.0.0.1:{port}: ")
