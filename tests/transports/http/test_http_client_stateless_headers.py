"""The headers a stateless (MCP 2026-07-28) request carries over Streamable HTTP: the values
mirrored from the body, the specification's encoding examples, and which ``x-mcp-header``
annotations are valid."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpbind.transports.http.client.headers import encode_value, param_headers, stateless_headers

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def message(method: str, **params: Any) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"_meta": META, **params}}
    ).encode()


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ],
)
def test_the_specifications_encoding_examples(value: str, encoded: str) -> None:
    assert encode_value(value) == encoded


def test_standard_headers() -> None:
    assert stateless_headers(message("tools/list")) == {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/list",
    }
    assert stateless_headers(message("resources/read", uri="file:///a b")) == {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "resources/read",
        "mcp-name": "file:///a b",
    }
    assert stateless_headers(message("prompts/get", name="größe"))["mcp-name"] == encode_value("größe")  # type: ignore[index]
    # A message of a session (no version in _meta) gets none.
    plain = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode()
    assert stateless_headers(plain) is None


def test_param_headers_from_the_tools_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "limit": {"type": "integer", "x-mcp-header": "Limit"},
            "dry": {"type": "boolean", "x-mcp-header": "Dry"},
            "where": {"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}},
            "query": {"type": "string"},
        },
    }
    found = param_headers(schema)
    assert found == [
        (("region",), "Region"),
        (("limit",), "Limit"),
        (("dry",), "Dry"),
        (("where", "zone"), "Zone"),
    ]
    arguments = {"region": "eu", "limit": 42, "dry": False, "where": {"zone": "b"}, "query": "q"}
    mirrored = stateless_headers(message("tools/call", name="run", arguments=arguments), {"run": found})
    assert mirrored is not None
    assert "Mcp-Param-Region" in mirrored  # named as the annotation spells it
    headers = {name.lower(): value for name, value in mirrored.items()}  # (HTTP: case-insensitive)
    assert (headers["mcp-param-region"], headers["mcp-param-limit"]) == ("eu", "42")
    assert (headers["mcp-param-dry"], headers["mcp-param-zone"]) == ("false", "b")
    # Absent or null values: no header.
    nulls = stateless_headers(message("tools/call", name="run", arguments={"region": None}), {"run": found})
    assert nulls is not None and not any(name.lower().startswith("mcp-param-") for name in nulls)


@pytest.mark.parametrize(
    "schema",
    [
        {"properties": {"a": {"type": "string", "x-mcp-header": ""}}},
        {"properties": {"a": {"type": "string", "x-mcp-header": "Bad Name"}}},
        {"properties": {"a": {"type": "number", "x-mcp-header": "A"}}},
        {"properties": {"a": {"type": "array", "x-mcp-header": "A"}}},
        {
            "properties": {
                "a": {"type": "string", "x-mcp-header": "A"},
                "b": {"type": "string", "x-mcp-header": "a"},
            }
        },
        {"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}},
        {"properties": {"a": {"anyOf": [{"type": "string", "x-mcp-header": "A"}]}}},
        {"$defs": {"x": {"type": "string", "x-mcp-header": "A"}}},
    ],
    ids=["empty", "not-a-token", "number", "array", "duplicate", "in-items", "in-anyOf", "in-defs"],
)
def test_invalid_annotations_are_refused(schema: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="x-mcp-header"):
        param_headers(schema)
