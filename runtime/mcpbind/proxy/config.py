"""The servers of a gateway, read from the configuration file format MCP clients already use::

    {
      "mcpServers": {
        "github": {"command": "npx", "args": ["-y", "some-github-server"], "env": {"TOKEN": "..."}},
        "docs":   {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ..."}},
        "legacy": {"type": "sse", "url": "https://example.com/sse", "timeout": 30, "maxInFlight": 8}
      }
    }

A server has a ``command`` (with ``args``, ``env`` merged over this process's environment,
``cwd``) or a ``url`` (with ``headers``; ``type`` ``"http"``/``"streamable-http"`` or ``"sse"``
picks the transport, else Streamable HTTP falling back to legacy SSE). Per server, ``timeout``
bounds each forwarded request (seconds) and ``maxInFlight`` the requests forwarded at once;
``"disabled": true`` leaves it out. Its name (letters, digits, ``-``) prefixes its tools and
prompts. Anything else is refused with an error naming the server and the member.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.proxy.upstream import Connector

__all__ = ["ConfigError", "ServerEntry", "parse_config", "read_config"]

_NAME: Final = re.compile(r"[A-Za-z0-9-]{1,64}")
_TRANSPORTS: Final[dict[str, Literal["auto", "streamable-http", "sse"]]] = {
    "http": "streamable-http",
    "streamable-http": "streamable-http",
    "streamableHttp": "streamable-http",
    "sse": "sse",
}
_KNOWN: Final = frozenset(
    {
        "command",
        "args",
        "env",
        "cwd",
        "url",
        "headers",
        "type",
        "transport",
        "timeout",
        "maxInFlight",
        "disabled",
    }
)


class ConfigError(ValueError):
    """The configuration cannot be used; the message says where and why."""


@dataclass(frozen=True)
class ServerEntry:
    """One server of the configuration."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    transport: Literal["auto", "streamable-http", "sse"] = "auto"
    timeout: float | None = None
    max_in_flight: int = 256

    def connector(self) -> Connector:
        """How the proxy connects to it."""
        entry = self

        @asynccontextmanager
        async def connect(client: Client) -> AsyncIterator[RemoteServer]:
            opened: AbstractAsyncContextManager[RemoteServer]
            if entry.command is not None:
                opened = client.connect_stdio(entry.command, entry.args, env=entry.env, cwd=entry.cwd)
            else:
                assert entry.url is not None
                opened = client.connect_url(entry.url, transport=entry.transport, headers=dict(entry.headers))
            async with opened as remote:
                yield remote

        return connect


def read_config(path: str | Path) -> list[ServerEntry]:
    """The servers of the configuration file at ``path`` (see the module)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not JSON ({exc})") from None
    try:
        return parse_config(document)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def parse_config(document: Any) -> list[ServerEntry]:
    """The servers of a parsed configuration document."""
    servers = document.get("mcpServers") if isinstance(document, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError('expected an object with "mcpServers": {name: server, ...}')
    entries = [e for name, value in servers.items() if (e := _entry(name, value)) is not None]
    if not entries:
        raise ConfigError('"mcpServers" names no server (or all are disabled)')
    return entries


def _entry(name: Any, value: Any) -> ServerEntry | None:
    where = f"mcpServers.{name}"
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ConfigError(f"{where}: a server's name is 1-64 letters, digits or '-' (it prefixes its tools)")
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected an object")
    unknown = sorted(set(value) - _KNOWN)
    if unknown:
        raise ConfigError(f"{where}: unknown member {unknown[0]!r}")
    if value.get("disabled") is True:
        return None
    command, url = value.get("command"), value.get("url")
    if (command is None) == (url is None):
        raise ConfigError(f'{where}: give either "command" (a stdio server) or "url" (an HTTP one)')
    timeout = value.get("timeout")
    if timeout is not None and (
        not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0
    ):
        raise ConfigError(f"{where}.timeout: a positive number of seconds")
    limit = value.get("maxInFlight", 256)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ConfigError(f"{where}.maxInFlight: a positive integer")
    common: dict[str, Any] = {
        "timeout": float(timeout) if timeout is not None else None,
        "max_in_flight": limit,
    }
    if command is not None:
        if value.get("type", "stdio") != "stdio":
            raise ConfigError(f"{where}.type: a server with a command is a stdio server")
        if not isinstance(command, str) or not command:
            raise ConfigError(f"{where}.command: a non-empty string")
        args = value.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ConfigError(f"{where}.args: a list of strings")
        env = _strings(value.get("env"), f"{where}.env")
        cwd = value.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise ConfigError(f"{where}.cwd: a string")
        return ServerEntry(name, command=command, args=tuple(args), env=env, cwd=cwd, **common)
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ConfigError(f"{where}.url: an http:// or https:// URL")
    kind = value.get("type", value.get("transport"))
    transport: Literal["auto", "streamable-http", "sse"] = "auto"
    if kind is not None:
        if kind not in _TRANSPORTS:
            raise ConfigError(f"{where}.type: one of {', '.join(sorted(_TRANSPORTS))}")
        transport = _TRANSPORTS[kind]
    headers = _strings(value.get("headers"), f"{where}.headers") or {}
    return ServerEntry(name, url=url, headers=headers, transport=transport, **common)


def _strings(value: Any, where: str) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ConfigError(f"{where}: an object of strings")
    return dict(value)
