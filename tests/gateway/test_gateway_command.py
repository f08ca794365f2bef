"""``mcpbind proxy --config``: a gateway of real stdio servers, over HTTP and over stdio."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.cli_harness import free_port, mcpbind_command, mcpbind_listening, run_mcpbind
from tests.harness import child_env

EXAMPLES = Path(__file__).parent.parent.parent / "examples"


def write_config(folder: Path) -> Path:
    python = sys.executable
    servers = {
        "echo": {"command": python, "args": [str(EXAMPLES / "echo_server.py")], "env": child_env()},
        "demo": {"command": python, "args": [str(EXAMPLES / "everything.py")], "env": child_env()},
        "broken": {"command": str(folder / "no-such-server")},
    }
    path = folder / "servers.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def gateway_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    config = write_config(tmp_path_factory.mktemp("gateway"))
    port = free_port()
    with mcpbind_listening("proxy", "--config", str(config), "--port", str(port), port=port):
        yield f"http://127.0.0.1:{port}"


def call(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_mcpbind("call", url, *args)


def test_the_servers_tools_are_listed_with_their_prefix(gateway_url: str) -> None:
    done = call(f"{gateway_url}/mcp", "tools/list")
    assert done.returncode == 0, done.stderr
    names = {tool["name"] for tool in json.loads(done.stdout)}
    assert {"echo_echo", "demo_add", "demo_weather"} <= names
    assert not any(name.startswith("broken_") for name in names)


def test_calls_reach_their_server_and_a_broken_one_fails_alone(gateway_url: str) -> None:
    echoed = call(f"{gateway_url}/mcp", "tools/call", "echo_echo", "--arg", "text=through")
    assert echoed.returncode == 0, echoed.stderr
    assert json.loads(echoed.stdout)["content"][0]["text"] == "through"
    added = call(f"{gateway_url}/mcp", "tools/call", "demo_add", "--arg", "a=2", "--arg", "b=40")
    assert json.loads(added.stdout)["structuredContent"] == {"result": 42}
    broken = call(f"{gateway_url}/mcp", "tools/call", "broken_anything")
    assert broken.returncode == 1
    assert "Upstream server 'broken' is unavailable" in json.loads(broken.stderr)["message"]


def test_health_says_degraded_while_one_server_is_down(gateway_url: str) -> None:
    answer = httpx.get(f"{gateway_url}/healthz", timeout=10)
    assert answer.status_code == 200
    report = answer.json()
    assert report["status"] == "degraded"
    assert report["servers"]["echo"]["status"] == "up"
    assert "FileNotFoundError" in report["servers"]["broken"]["status"]


def test_the_gateway_over_stdio(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    command = shlex.join(mcpbind_command("proxy", "--config", str(config), "--stdio", "--log-level", "error"))
    done = run_mcpbind("call", command, "tools/call", "demo_add", "--arg", "a=1", "--arg", "b=2")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["structuredContent"] == {"result": 3}


def test_a_bad_configuration_is_one_line_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    path.write_text('{"mcpServers": {"a": {"url": "ftp://x"}}}', encoding="utf-8")
    done = run_mcpbind("proxy", "--config", str(path))
    assert done.returncode == 2
    assert done.stderr == f"mcpbind: proxy: {path}: mcpServers.a.url: an http:// or https:// URL\n"
