"""The official MCP Python SDK's client with its OAuth provider (``mcp.client.auth``), for
tests/interop/test_official_client_auth.py: it connects to the protected MCP server at
``sys.argv[1]`` over Streamable HTTP, signs in (the redirect handler plays the user: it opens the
authorization URL, which the test's authorization server approves at once, and the callback
handler reads the redirect), lists the tools, calls ``whoami`` and ``write`` (which needs more
scope: a step-up), and prints what it saw as one JSON object. Run as
``python official_oauth_client.py URL``."""

from __future__ import annotations

import json
import sys
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import mcp
import mcp.types
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

REDIRECT_URI = "http://127.0.0.1:9/callback"  # never reached: the redirect is read, not followed


class MemoryStorage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Browser:
    """Opens the authorization URL and keeps where it was sent back to."""

    def __init__(self) -> None:
        self.visited: list[str] = []
        self.location = ""

    async def open(self, url: str) -> None:
        self.visited.append(url)
        async with httpx2.AsyncClient(follow_redirects=False) as http:
            response = await http.get(url)
        if response.status_code != 302:
            raise RuntimeError(f"the authorization endpoint answered {response.status_code}: {response.text}")
        self.location = response.headers["location"]

    async def callback(self) -> AuthorizationCodeResult:
        query = {name: values[0] for name, values in parse_qs(urlsplit(self.location).query).items()}
        if "error" in query:
            raise RuntimeError(f"authorization refused: {query}")
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))


def text_of(result: mcp.types.CallToolResult) -> str:
    block = result.content[0]
    if result.is_error or not isinstance(block, mcp.types.TextContent):
        raise RuntimeError(f"the tool failed: {result}")
    return block.text


async def main(url: str) -> dict[str, Any]:
    browser = Browser()
    storage = MemoryStorage()
    provider = OAuthClientProvider(
        url,
        OAuthClientMetadata(client_name="official-sdk-e2e", redirect_uris=[REDIRECT_URI]),  # type: ignore[list-item]
        storage,
        redirect_handler=browser.open,
        callback_handler=browser.callback,
    )
    async with (
        httpx2.AsyncClient(auth=provider, timeout=20) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        mcp.ClientSession(read, write) as session,
    ):
        initialized = await session.initialize()
        tools = [tool.name for tool in (await session.list_tools()).tools]
        whoami = text_of(await session.call_tool("whoami", {}))
        wrote = text_of(await session.call_tool("write", {"text": "from the SDK"}))
        whoami_after = text_of(await session.call_tool("whoami", {}))
    return {
        "protocol_version": initialized.protocol_version,
        "tools": tools,
        "whoami": whoami,
        "write": wrote,
        "whoami_after": whoami_after,
        "visited": browser.visited,
        "scope": storage.tokens.scope if storage.tokens is not None else None,
    }


if __name__ == "__main__":
    print(json.dumps(anyio.run(main, sys.argv[1])))
