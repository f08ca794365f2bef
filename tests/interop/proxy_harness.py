"""What the interop tests of ``mcpbind proxy`` share: the TypeScript reference server
``@modelcontextprotocol/server-everything`` (installed with npm into the npm peers' cache
folder, ``MCPBIND_NPM_PEERS``, as tests/interop/test_http_client_peers.py does), and
``mcpbind proxy`` started in a child process.

Without node or npm the tests using them skip, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import pytest

from tests.cli_harness import free_port, mcpbind_command, stop, wait_listening
from tests.harness import child_env

__all__ = ["EVERYTHING", "NPM_CACHE", "everything_command", "install_everything", "node", "proxy_serving"]

NPM_CACHE = Path(os.environ.get("MCPBIND_NPM_PEERS", Path(tempfile.gettempdir()) / "mcpbind-npm-peers"))
EVERYTHING = "@modelcontextprotocol/server-everything"


def unavailable(reason: str) -> NoReturn:
    """Skip, or fail under CI=true, when a peer cannot be run here."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (required under CI=true)")
    pytest.skip(reason)


def node() -> str:
    """The node executable (skips the test when there is none)."""
    found = shutil.which("node")
    if found is None:
        unavailable("node is needed to run the TypeScript peers")
    return found


def install_everything() -> Path:
    """The server-everything entry point (``dist/index.js``), installed with npm into
    ``NPM_CACHE`` on first use."""
    node()
    npm = shutil.which("npm")
    if npm is None:
        unavailable("npm is needed to install server-everything")
    entry = NPM_CACHE / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    if not entry.is_file():
        NPM_CACHE.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "npm_config_update_notifier": "false", "npm_config_fund": "false"}
        if not (NPM_CACHE / "package.json").is_file():
            subprocess.run([npm, "init", "-y"], cwd=NPM_CACHE, env=env, check=True, capture_output=True)
        result = subprocess.run(
            [npm, "install", "--no-audit", "--silent", EVERYTHING],
            cwd=NPM_CACHE,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if result.returncode != 0 or not entry.is_file():
            unavailable(f"npm could not install {EVERYTHING}: {result.stderr.strip()[-500:]}")
    return entry


def everything_command() -> list[str]:
    """The command line of server-everything over stdio."""
    return [node(), str(install_everything()), "stdio"]


@contextmanager
def proxy_serving(
    *server: str, options: tuple[str, ...] = (), env: dict[str, str] | None = None
) -> Iterator[str]:
    """``mcpbind proxy --port P OPTIONS -- SERVER...`` in a child process (its environment, which
    the server inherits, with ``env`` added), on a free port of 127.0.0.1, from when it listens
    until the block ends (then it is stopped); yields its MCP URL. What the proxy and the server
    print on stderr is shown when the block fails."""
    port = free_port()
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            mcpbind_command("proxy", "--port", str(port), *options, "--", *server),
            env={**child_env(), **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )
        try:
            wait_listening(port, process)
            yield f"http://127.0.0.1:{port}/mcp"
        except BaseException:
            errors.seek(0)
            print(f"mcpbind proxy printed:\n{errors.read().decode(errors='replace')[-4000:]}")
            raise
        finally:
            stop(process)
