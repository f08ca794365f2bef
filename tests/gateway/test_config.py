"""The gateway's configuration file: the format MCP clients use, checked member by member."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpbind.proxy import ConfigError, ServerEntry, parse_config, read_config


def test_stdio_and_http_servers_are_read() -> None:
    entries = parse_config(
        {
            "mcpServers": {
                "github": {"command": "npx", "args": ["-y", "srv"], "env": {"TOKEN": "t"}, "timeout": 30},
                "docs": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "x"}},
                "old": {"type": "sse", "url": "http://127.0.0.1:9/sse", "maxInFlight": 4},
                "off": {"command": "x", "disabled": True},
            }
        }
    )
    assert entries == [
        ServerEntry("github", command="npx", args=("-y", "srv"), env={"TOKEN": "t"}, timeout=30.0),
        ServerEntry(
            "docs", url="https://example.com/mcp", headers={"Authorization": "x"}, transport="streamable-http"
        ),
        ServerEntry("old", url="http://127.0.0.1:9/sse", transport="sse", max_in_flight=4),
    ]


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({}, '"mcpServers"'),
        ({"mcpServers": {}}, "names no server"),
        ({"mcpServers": {"a b": {"command": "x"}}}, "mcpServers.a b: a server's name"),
        ({"mcpServers": {"a": {"command": "x", "url": "http://h/"}}}, 'either "command"'),
        ({"mcpServers": {"a": {"command": "x", "args": "y"}}}, "mcpServers.a.args"),
        ({"mcpServers": {"a": {"url": "ftp://h/"}}}, "mcpServers.a.url"),
        ({"mcpServers": {"a": {"url": "http://h/", "type": "ws"}}}, "mcpServers.a.type"),
        ({"mcpServers": {"a": {"command": "x", "timeout": 0}}}, "mcpServers.a.timeout"),
        ({"mcpServers": {"a": {"command": "x", "maxInFlight": True}}}, "mcpServers.a.maxInFlight"),
        ({"mcpServers": {"a": {"command": "x", "bogus": 1}}}, "unknown member 'bogus'"),
    ],
)
def test_bad_configurations_say_where(document: object, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(document)
    assert message in str(caught.value)


def test_a_file_that_is_not_json_is_named(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    path.write_text("{nope", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        read_config(path)
    assert str(caught.value).startswith(f"{path}: not JSON")
    path.write_text(json.dumps({"mcpServers": {"a": {"command": "x"}}}), encoding="utf-8")
    assert read_config(path) == [ServerEntry("a", command="x")]
