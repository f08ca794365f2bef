"""What a stdio server's start-up imports: none of the HTTP stack, OAuth, the proxy, the client
or the stdio client's process handling (they cost start-up time and memory a stdio server never
uses), nor the types of a protocol version no client asked for. A server process runs the
example echo server to the end of its input (empty: it starts, then exits; or a handshake of
2025-11-25 and one call) and names what it had imported; on asyncio and on trio."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness import child_env

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "echo_server.py"

# Never on a stdio server's start-up path (prefixes of module names).
NOT_LOADED = (
    "httpx",
    "httpcore",
    "uvicorn",
    "starlette",
    "h11",
    "mcpbind.transports.http",
    "mcpbind.oauth",
    "mcpbind.proxy",
    "mcpbind.client",
    "mcpbind.transports.stdio.process",
    # The newest schema (stateless only): loaded when a stateless request arrives.
    "mcpbind.schema.v2026_07_28",
    # Only for a handler object's misspelt method name.
    "difflib",
)

# A session of 2025-11-25: initialize, initialized, one call.
SESSION = b"\n".join(
    [
        b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
        b'"capabilities":{},"clientInfo":{"name":"t","version":"0"}}}',
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}',
        b"",
    ]
)

RUN = """
import json, runpy, sys
sys.argv = [sys.argv[1], "--backend", sys.argv[2]]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
finally:
    print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


@pytest.mark.parametrize("session", [b"", SESSION], ids=["empty", "session"])
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_stdio_server_starts_without_the_http_stack_or_the_client(backend: str, session: bytes) -> None:
    done = subprocess.run(
        [sys.executable, "-c", RUN, str(EXAMPLE), backend],
        input=session,
        env=child_env(),
        capture_output=True,
        check=True,
        timeout=60,
    )
    if session:
        assert b'"text":"hi"' in done.stdout.splitlines()[-1]
    modules: list[str] = json.loads(done.stderr.decode().strip().splitlines()[-1])
    assert "mcpbind.server.server" in modules and "mcpbind.transports.stdio.stream" in modules
    loaded = [m for m in modules if any(m == p or m.startswith(p + ".") for p in NOT_LOADED)]
    assert loaded == []
    if backend == "asyncio":
        assert "trio" not in modules
