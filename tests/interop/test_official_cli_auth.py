"""``mcpbind call URL`` signing in to the official MCP Python SDK as authorization server and
protected MCP server (tests/interop/official_auth_server.py in a child process on 127.0.0.1):
the command registers with the loopback redirect URI it listens on and prints the sign-in URL
(--no-browser); the test, as the browser, visits it, the SDK's authorization endpoint sends it to
the loopback redirect, and the call goes through with the token."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import httpx
import pytest

from tests.harness import child_env
from tests.interop.child_http import child_http_server

pytestmark = pytest.mark.anyio

SERVER = Path(__file__).with_name("official_auth_server.py")


async def test_mcpbind_call_signs_in_to_the_official_sdk(anyio_backend: str, tmp_path: Path) -> None:
    store = tmp_path / "tokens.json"
    async with child_http_server(lambda port: [sys.executable, str(SERVER), str(port)], "official") as url:
        call = [sys.executable, "-m", "mcpbind", "call", url, "tools/call", "hello", "--arg", "name=CLI"]
        call += ["--no-browser", "--token-store", str(store), "--backend", anyio_backend]
        with anyio.fail_after(60):
            async with await anyio.open_process(call, env=child_env()) as process:
                assert process.stderr is not None and process.stdout is not None
                printed = ""
                while not any(line.strip().startswith("http") for line in printed.split("\n")[:-1]):
                    printed += (await process.stderr.receive()).decode()
                visit = next(line.strip() for line in printed.split("\n") if line.strip().startswith("http"))
                async with httpx.AsyncClient(follow_redirects=True) as browser:
                    page = await browser.get(visit)
                out = b"".join([chunk async for chunk in process.stdout])
                code = await process.wait()
    assert "resource=" in visit and "code_challenge_method=S256" in visit
    assert page.status_code == 200 and "Authorization complete" in page.text
    assert code == 0
    assert json.loads(out)["content"][0]["text"] == "hello CLI"
    assert json.loads(store.read_text())["tokens"]  # kept for the next call
