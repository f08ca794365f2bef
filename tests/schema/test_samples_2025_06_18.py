"""Hand-written sample messages for every MCP 2025-06-18 request, result and notification.

Each sample is a whole JSON-RPC message. It goes through the wire codec the way a peer would
receive it (``decode`` then the typed ``request_params`` / ``notification_params`` /
``result``), is encoded again from the typed value, and must come back as equal JSON: a member
the generated structs drop, rename or reshape fails the comparison. The samples fill the
optional members too (``_meta``, ``annotations``, ``title``, ``structuredContent``,
``isError``, ``nextCursor``, ...), so losing one of them is caught as well, and each sample names
the struct it must decode into plus a few attribute values to spot-check.
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Sequence
from typing import Any, get_args

import pytest
from msgspec import UNSET

from mcpbind.protocol.methods import Direction
from mcpbind.protocol.wire import (
    Codec,
    ErrorResponse,
    Notification,
    Request,
    Response,
    TypedNotification,
    TypedRequest,
)
from mcpbind.schema import v2025_06_18 as mcp
from mcpbind.schema.v2025_06_18 import methods
from tests.schema.sample_checks import Check, Side, check, dig, other, wire

VERSION = "2025-06-18"
# (attribute path, expected value); a path is dotted attribute names, list indexes and dict keys,
# or a tuple of them; an expected value that is a class is an isinstance check.

# Small base64 payloads of our own: the start of a PNG, of a WAV file and of a gzip stream.
PNG_B64 = base64.b64encode(
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x02"
).decode()
WAV_B64 = base64.b64encode(b"RIFF\x24\x08\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x80\xbb").decode()
GZIP_B64 = base64.b64encode(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03station-log-2025-06").decode()

ANNOTATIONS: dict[str, Any] = {
    "audience": ["user", "assistant"],
    "priority": 0.75,
    "lastModified": "2025-06-20T08:15:00Z",
}


# -- the content blocks, each with every optional member -------------------------------------

TEXT_BLOCK: dict[str, Any] = {
    "type": "text",
    "text": "Station WX-114 reports 18.4 °C, wind 12 km/h from the north-west.",
    "annotations": ANNOTATIONS,
    "_meta": {"com.example.weather/source": "wx-114"},
}
IMAGE_BLOCK: dict[str, Any] = {
    "type": "image",
    "data": PNG_B64,
    "mimeType": "image/png",
    "annotations": {"audience": ["user"], "priority": 0.4},
    "_meta": {"com.example.weather/chart": "temperature-24h"},
}
AUDIO_BLOCK: dict[str, Any] = {
    "type": "audio",
    "data": WAV_B64,
    "mimeType": "audio/wav",
    "annotations": {"audience": ["assistant"], "priority": 0.1, "lastModified": "2025-06-19T23:59:59Z"},
    "_meta": {"com.example.weather/durationMs": 1800},
}
RESOURCE_LINK_BLOCK: dict[str, Any] = {
    "type": "resource_link",
    "uri": "file:///srv/weather/stations/wx-114/readings.csv",
    "name": "wx-114-readings",
    "title": "WX-114 raw readings",
    "description": "Ten-minute readings for the last 30 days.",
    "mimeType": "text/csv",
    "size": 482113,
    "annotations": {"audience": ["user", "assistant"], "priority": 0.6},
    "_meta": {"com.example.weather/rows": 4320},
}
EMBEDDED_TEXT_BLOCK: dict[str, Any] = {
    "type": "resource",
    "resource": {
        "uri": "file:///srv/weather/stations/wx-114/README.md",
        "mimeType": "text/markdown",
        "text": "# WX-114\n\nRooftop station, 42 m above sea level.\n",
        "_meta": {"com.example.weather/etag": '"5f2a-91"'},
    },
    "annotations": {"audience": ["assistant"], "priority": 0.9},
    "_meta": {"com.example.weather/embedded": True},
}
EMBEDDED_BLOB_BLOCK: dict[str, Any] = {
    "type": "resource",
    "resource": {
        "uri": "file:///srv/weather/stations/wx-114/log-2025-06.gz",
        "mimeType": "application/gzip",
        "blob": GZIP_B64,
        "_meta": {"com.example.weather/compressed": True},
    },
    "annotations": {"audience": ["user"], "priority": 0.2, "lastModified": "2025-06-30T00:00:00Z"},
    "_meta": {"com.example.weather/month": "2025-06"},
}
ALL_BLOCKS = [
    TEXT_BLOCK,
    IMAGE_BLOCK,
    AUDIO_BLOCK,
    RESOURCE_LINK_BLOCK,
    EMBEDDED_TEXT_BLOCK,
    EMBEDDED_BLOB_BLOCK,
]
BLOCK_CLASSES: list[type] = [
    mcp.TextContent,
    mcp.ImageContent,
    mcp.AudioContent,
    mcp.ResourceLink,
    mcp.EmbeddedResource,
    mcp.EmbeddedResource,
]
# Every content block kind a 2025-06-18 ContentBlock can be, with the two embedded resource kinds.
CONTENT_KINDS = {"text", "image", "audio", "resource_link", "resource/text", "resource/blob"}


def _kind(block: dict[str, Any]) -> str:
    if block["type"] != "resource":
        return str(block["type"])
    return "resource/blob" if "blob" in block["resource"] else "resource/text"


# -- requests ------------------------------------------------------------------------------------

REQUEST_SAMPLES = [
    pytest.param(
        "client",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {
                    "roots": {"listChanged": True},
                    "sampling": {},
                    "elicitation": {},
                    "experimental": {"com.example.tracing": {"level": "verbose", "sampleRate": 0.25}},
                },
                "clientInfo": {
                    "name": "fieldnotes-desktop",
                    "title": "Fieldnotes Desktop",
                    "version": "3.2.0",
                },
                "_meta": {"com.example/resumeSession": "9d0c"},
            },
        },
        mcp.InitializeRequestParams,
        [
            ("protocol_version", "2025-06-18"),
            ("client_info", mcp.Implementation),
            ("client_info.title", "Fieldnotes Desktop"),
            ("capabilities.roots.list_changed", True),
            (("capabilities", "experimental", "com.example.tracing", "sampleRate"), 0.25),
            ("capabilities.sampling", {}),
            (("meta", "com.example/resumeSession"), "9d0c"),
        ],
        id="initialize",
    ),
    pytest.param(
        "client",
        {
            "jsonrpc": "2.0",
            "id": "ping-c-7",
            "method": "ping",
            "params": {"_meta": {"progressToken": "ping-7"}},
        },
        dict,
        [("_meta.progressToken", "ping-7")],
        id="ping/from-client",
    ),
    pytest.param(
        "server",
        {"jsonrpc": "2.0", "id": 9001, "method": "ping"},
        dict,
        [],
        id="ping/from-server-no-params",
    ),
    pytest.param(
        "client",
        {"jsonrpc": "2.0", "id": 2, "method": "resources/list", "params": {"cursor": "c3RhdGlvbnM6NTA="}},
        mcp.ListResourcesRequestParams,
        [("cursor", "c3RhdGlvbnM6NTA=")],
        id="resources/list",
    ),
    pytest.param(
        "client",
        {"jsonrpc": "2.0", "id": 3, "method": "resources/templates/list", "params": {"cursor": "tpl-page-2"}},
        mcp.ListResourceTemplatesRequestParams,
        [("cursor", "tpl-page-2")],
        id="resources/templates/list",
    ),
    pytest.param(
        "client",
        {"jsonrpc": "2.0", "id": 4, "method": "resources/templates/list"},
        mcp.ListResourceTemplatesRequestParams,
        [("cursor", UNSET)],
        id="resources/templates/list/no-params",
    ),
    pytest.param(
        "client",
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "resources/read",
            "params": {"uri": "file:///srv/weather/stations/wx-114/README.md", "_meta": {"progressToken": 5}},
        },
        mcp.ReadResourceRequestParams,
        [("uri", "file:///srv/weather/stations/wx-114/README.md")],
        id="resources/read",
    ),
    pytest.param(
        "client",
        {
            "jsonrpc": "2.0",
            "id": 6,
            "method": "resources/subscribe",
            "params": {"uri": "weather://stations/wx-114/current", "_meta": {"com.example/minIntervalS": 60}},
        },
        mcp.SubscribeRequestParams,
        [("uri", "weather://stations/wx-114/current")],
        id="resources/subscribe",
    ),
    pytest.param(
        "client",
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "resources/unsubscribe",
            "params": {"uri": "weather://stations/wx-114/current"},
        },
        mcp.UnsubscribeRequestParams,
        [("uri", "weather://stations/wx-114/current")],
        id="resources/unsubscribe",
    ),
    pytest.param(
        "client",
        {
            "jsonrpc": "2.0",
            "id": 8,
            "method": "prompts/list",
            "params": {"cursor": "prompts/after/daily_brief"},
        },
        mcp.ListPromptsRequestParams,
        [("cursor", "prompts/after/daily_brief")],
        id="prompts/list",
    ),
    pytest.param(
        "client",
        {
            "jsonrpc": "2.0",
            "id": "get-brief",
            "method": "prompts/get",
            "params": {
                "name": "station_report",
                "arguments": {"station": "wx-114", "period": "24h"},
                "_meta": {"progressToken": "brief-1"},
            },
        },
        mcp.GetPromptRequestParams,
        [("name", "station_report"), ("arguments.period", "24h")],
        id="prompts/get",
    ),
    pytest.param(
        "client",
        {"jsonrpc": "2.0", "id": 10, "method": "tools/list", "params": {"cursor": "dG9vbHM6MjA="}},
        mcp.ListToolsRequestParams,
        [("cursor", "dG9vbHM6MjA=")],
        id="tools/list",
    ),
    pytest.param(
        "client",
        {
            "jsonrpc": "2.0",
            "id": 11,
            "method": "tools/call",
            "params": {
                "name": "get_forecast",
                "arguments": {
                    "station": "wx-114",
                    "days": 3,
                    "units": {"temperature": "celsius", "wind": "km/h"},
                    "include": ["precipitation", "uv_index"],
                    "hourly": False,
                    "threshold": 0.5,
                    "note": None,
                },
            },
        },
        mcp.CallToolRequestParams,
        [
            ("name", "get_forecast"),
            ("arguments.days", 3),
            ("arguments.units.wind", "km/h"),
            ("arguments.note", None),
        ],
        id="tools/call",
    ),
    pytest.param(
        "client",
        {
            "jsonrpc": "2.0",
            "id": 16,
            "method": "tools/call",
            "params": {
                "_meta": {"progressToken": "fc-16", "com.example/requestedBy": "dashboard"},
                "name": "get_forecast",
                "arguments": {"station": "wx-114", "days": 7},
            },
        },
        mcp.CallToolRequestParams,
        [
            ("name", "get_forecast"),
            ("meta.progressToken", "fc-16"),
            (("meta", "com.example/requestedBy"), "dashboard"),
        ],
        id="tools/call/progress-token",
    ),
    pytest.param(
        "client",
        {
            "jsonrpc": "2.0",
            "id": 12,
            "method": "logging/setLevel",
            "params": {"level": "warning", "_meta": {}},
        },
        mcp.SetLevelRequestParams,
        [("level", "warning")],
        id="logging/setLevel",
    ),
    pytest.param(
        "client",
        {
            "jsonrpc": "2.0",
            "id": 13,
            "method": "completion/complete",
            "params": {
                "ref": {"type": "ref/prompt", "name": "station_report", "title": "Station report"},
                "argument": {"name": "period", "value": "4"},
                "context": {"arguments": {"station": "wx-114"}},
                "_meta": {"com.example/keystrokeMs": 140},
            },
        },
        mcp.CompleteRequestParams,
        [
            ("ref", mcp.PromptReference),
            ("ref.title", "Station report"),
            ("context.arguments.station", "wx-114"),
        ],
        id="completion/complete/prompt",
    ),
    pytest.param(
        "client",
        {
            "jsonrpc": "2.0",
            "id": 14,
            "method": "completion/complete",
            "params": {
                "ref": {"type": "ref/resource", "uri": "weather://stations/{station}/current"},
                "argument": {"name": "station", "value": "wx-1"},
            },
        },
        mcp.CompleteRequestParams,
        [("ref", mcp.ResourceTemplateReference), ("argument.value", "wx-1"), ("context", UNSET)],
        id="completion/complete/resource",
    ),
    pytest.param(
        "server",
        {
            "jsonrpc": "2.0",
            "id": "sample-31",
            "method": "sampling/createMessage",
            "params": {
                "messages": [
                    {
                        "role": "user",
                        "content": {"type": "text", "text": "Summarise the attached chart in one line."},
                    },
                    {"role": "user", "content": IMAGE_BLOCK},
                    {"role": "user", "content": AUDIO_BLOCK},
                    {"role": "assistant", "content": {"type": "text", "text": "Mild and dry, wind easing."}},
                ],
                "modelPreferences": {
                    "hints": [{"name": "claude-sonnet"}, {"name": "gpt-4o"}],
                    "costPriority": 0.3,
                    "speedPriority": 0.5,
                    "intelligencePriority": 0.8,
                },
                "systemPrompt": "You are a terse meteorologist.",
                "includeContext": "thisServer",
                "temperature": 0.2,
                "maxTokens": 120,
                "stopSequences": ["\n\n", "END"],
                "metadata": {"com.example/trace": "a1b2c3", "retries": 0},
                "_meta": {"progressToken": "sample-31"},
            },
        },
        mcp.CreateMessageRequestParams,
        [
            ("messages.1.content", mcp.ImageContent),
            ("messages.2.content", mcp.AudioContent),
            ("messages.2.content.mime_type", "audio/wav"),
            ("model_preferences.hints.1.name", "gpt-4o"),
            ("include_context", "thisServer"),
            ("max_tokens", 120),
        ],
        id="sampling/createMessage",
    ),
    pytest.param(
        "server",
        {"jsonrpc": "2.0", "id": 40, "method": "roots/list", "params": {"_meta": {"progressToken": 40}}},
        dict,
        [("_meta.progressToken", 40)],
        id="roots/list",
    ),
    pytest.param(
        "server",
        {"jsonrpc": "2.0", "id": 41, "method": "roots/list"},
        dict,
        [],
        id="roots/list/no-params",
    ),
    pytest.param(
        "server",
        {
            "jsonrpc": "2.0",
            "id": 42,
            "method": "elicitation/create",
            "params": {
                "message": "Where should the weekly report be sent?",
                "requestedSchema": {
                    "type": "object",
                    "properties": {
                        "email": {
                            "type": "string",
                            "title": "Email",
                            "description": "Recipient address",
                            "format": "email",
                            "minLength": 6,
                            "maxLength": 120,
                        },
                        "copies": {"type": "integer", "title": "Copies", "minimum": 1, "maximum": 5},
                        "threshold": {"type": "number", "description": "Alert above (°C)", "minimum": -40.5},
                        "attachCharts": {"type": "boolean", "title": "Attach charts", "default": True},
                        "format": {
                            "type": "string",
                            "title": "Format",
                            "enum": ["pdf", "html", "md"],
                            "enumNames": ["PDF", "Web page", "Markdown"],
                        },
                    },
                    "required": ["email", "format"],
                },
                "_meta": {"com.example/formId": "weekly-report"},
            },
        },
        mcp.ElicitRequestParams,
        [
            ("requested_schema.properties.email", mcp.StringSchema),
            ("requested_schema.properties.email.format", "email"),
            ("requested_schema.properties.copies", mcp.NumberSchema),
            ("requested_schema.properties.copies.type", "integer"),
            ("requested_schema.properties.threshold.minimum", -40.5),
            ("requested_schema.properties.attachCharts", mcp.BooleanSchema),
            ("requested_schema.properties.attachCharts.default", True),
            ("requested_schema.properties.format", mcp.EnumSchema),
            ("requested_schema.properties.format.enum_names", ["PDF", "Web page", "Markdown"]),
            ("requested_schema.required", ["email", "format"]),
        ],
        id="elicitation/create",
    ),
]

# -- results (the response to each request; the method names the request it answers) -----------

RESULT_SAMPLES = [
    pytest.param(
        "initialize",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "protocolVersion": "2025-06-18",
                "capabilities": {
                    "logging": {},
                    "completions": {},
                    "prompts": {"listChanged": True},
                    "resources": {"subscribe": True, "listChanged": True},
                    "tools": {"listChanged": False},
                    "experimental": {"com.example.weather/alerts": {"regions": ["EU", "NA"]}},
                },
                "serverInfo": {"name": "weather-station-mcp", "title": "Weather Station", "version": "0.9.4"},
                "instructions": "Call get_forecast with a station id; list stations with resources/list.",
                "_meta": {"com.example/build": "2025-06-17.3"},
            },
        },
        mcp.InitializeResult,
        [
            ("server_info.title", "Weather Station"),
            ("capabilities.resources.subscribe", True),
            ("capabilities.tools.list_changed", False),
            ("capabilities.completions", {}),
            (("meta", "com.example/build"), "2025-06-17.3"),
        ],
        id="initialize",
    ),
    pytest.param(
        "ping", {"jsonrpc": "2.0", "id": "ping-c-7", "result": {}}, mcp.Result, [("meta", UNSET)], id="ping"
    ),
    pytest.param(
        "ping",
        {"jsonrpc": "2.0", "id": 9001, "result": {"_meta": {"com.example/uptimeS": 86400}}},
        mcp.Result,
        [(("meta", "com.example/uptimeS"), 86400)],
        id="ping/with-meta",
    ),
    pytest.param(
        "resources/list",
        {
            "jsonrpc": "2.0",
            "id": 2,
            "result": {
                "resources": [
                    {
                        "uri": "weather://stations/wx-114/current",
                        "name": "wx-114-current",
                        "title": "WX-114 current conditions",
                        "description": "Latest reading, refreshed every ten minutes.",
                        "mimeType": "application/json",
                        "size": 512,
                        "annotations": ANNOTATIONS,
                        "_meta": {"com.example.weather/region": "EU-West"},
                    },
                    {"uri": "file:///srv/weather/stations/wx-114/README.md", "name": "wx-114-readme"},
                ],
                "nextCursor": "c3RhdGlvbnM6MTAw",
                "_meta": {"com.example/total": 212},
            },
        },
        mcp.ListResourcesResult,
        [
            ("resources.0", mcp.Resource),
            ("resources.0.annotations.priority", 0.75),
            ("resources.0.size", 512),
            ("resources.1.title", UNSET),
            ("next_cursor", "c3RhdGlvbnM6MTAw"),
        ],
        id="resources/list",
    ),
    pytest.param(
        "resources/templates/list",
        {
            "jsonrpc": "2.0",
            "id": 3,
            "result": {
                "resourceTemplates": [
                    {
                        "uriTemplate": "weather://stations/{station}/history/{date}",
                        "name": "station-history",
                        "title": "Station history for a day",
                        "description": "All readings of one station on one calendar day.",
                        "mimeType": "text/csv",
                        "annotations": {"audience": ["assistant"], "priority": 0.5},
                        "_meta": {"com.example.weather/retentionDays": 365},
                    }
                ],
                "nextCursor": "tpl-page-3",
                "_meta": {"com.example/generatedAt": "2025-06-20T08:00:00Z"},
            },
        },
        mcp.ListResourceTemplatesResult,
        [
            ("resource_templates.0", mcp.ResourceTemplate),
            ("resource_templates.0.uri_template", "weather://stations/{station}/history/{date}"),
            ("resource_templates.0.annotations.audience", ["assistant"]),
        ],
        id="resources/templates/list",
    ),
    pytest.param(
        "resources/read",
        {
            "jsonrpc": "2.0",
            "id": 5,
            "result": {
                "contents": [EMBEDDED_TEXT_BLOCK["resource"], EMBEDDED_BLOB_BLOCK["resource"]],
                "_meta": {"com.example/cache": "hit"},
            },
        },
        mcp.ReadResourceResult,
        [
            ("contents.0", mcp.TextResourceContents),
            ("contents.0.mime_type", "text/markdown"),
            ("contents.1", mcp.BlobResourceContents),
            ("contents.1.blob", GZIP_B64),
        ],
        id="resources/read",
    ),
    pytest.param(
        "resources/subscribe",
        {"jsonrpc": "2.0", "id": 6, "result": {}},
        mcp.Result,
        [],
        id="resources/subscribe",
    ),
    pytest.param(
        "resources/unsubscribe",
        {"jsonrpc": "2.0", "id": 7, "result": {"_meta": {"com.example/subscriptions": 0}}},
        mcp.Result,
        [(("meta", "com.example/subscriptions"), 0)],
        id="resources/unsubscribe",
    ),
    pytest.param(
        "prompts/list",
        {
            "jsonrpc": "2.0",
            "id": 8,
            "result": {
                "prompts": [
                    {
                        "name": "station_report",
                        "title": "Station report",
                        "description": "A plain-language report of one station over a period.",
                        "arguments": [
                            {
                                "name": "station",
                                "title": "Station",
                                "description": "Station id",
                                "required": True,
                            },
                            {"name": "period", "description": "24h, 7d or 30d", "required": False},
                        ],
                        "_meta": {"com.example/category": "reports"},
                    },
                    {"name": "storm_watch"},
                ],
                "nextCursor": "prompts/after/storm_watch",
                "_meta": {"com.example/page": 2},
            },
        },
        mcp.ListPromptsResult,
        [
            ("prompts.0", mcp.Prompt),
            ("prompts.0.arguments.0", mcp.PromptArgument),
            ("prompts.0.arguments.0.required", True),
            ("prompts.0.arguments.1.title", UNSET),
            ("prompts.1.arguments", UNSET),
        ],
        id="prompts/list",
    ),
    pytest.param(
        "prompts/get",
        {
            "jsonrpc": "2.0",
            "id": "get-brief",
            "result": {
                "description": "Station report for wx-114 over 24h",
                "messages": [
                    {"role": "user" if i % 2 == 0 else "assistant", "content": block}
                    for i, block in enumerate(ALL_BLOCKS)
                ],
                "_meta": {"com.example/promptVersion": 4},
            },
        },
        mcp.GetPromptResult,
        [("messages.0", mcp.PromptMessage), ("messages.1.role", "assistant")]
        + [(f"messages.{i}.content", cls) for i, cls in enumerate(BLOCK_CLASSES)]
        + [
            ("messages.3.content.size", 482113),
            ("messages.4.content.resource", mcp.TextResourceContents),
            ("messages.5.content.resource", mcp.BlobResourceContents),
        ],
        id="prompts/get",
    ),
    pytest.param(
        "tools/list",
        {
            "jsonrpc": "2.0",
            "id": 10,
            "result": {
                "tools": [
                    {
                        "name": "get_forecast",
                        "title": "Get forecast",
                        "description": "Forecast for a station, up to seven days ahead.",
                        "inputSchema": {
                            "type": "object",
                            "properties": {
                                "station": {"type": "string", "pattern": "^wx-[0-9]+$"},
                                "days": {"type": "integer", "minimum": 1, "maximum": 7},
                            },
                            "required": ["station"],
                            "additionalProperties": False,
                        },
                        "outputSchema": {
                            "type": "object",
                            "properties": {"days": {"type": "array", "items": {"type": "object"}}},
                            "required": ["days"],
                        },
                        "annotations": {
                            "title": "Forecast",
                            "readOnlyHint": True,
                            "destructiveHint": False,
                            "idempotentHint": True,
                            "openWorldHint": True,
                        },
                        "_meta": {"com.example/rateLimitPerMinute": 30},
                    },
                    {"name": "reset_station", "inputSchema": {"type": "object"}},
                ],
                "nextCursor": "dG9vbHM6NDA=",
                "_meta": {"com.example/toolsetVersion": "2025.6"},
            },
        },
        mcp.ListToolsResult,
        [
            ("tools.0", mcp.Tool),
            ("tools.0.annotations", mcp.ToolAnnotations),
            ("tools.0.annotations.read_only_hint", True),
            ("tools.0.output_schema.required", ["days"]),
            ("tools.0.input_schema.additionalProperties", False),
            ("tools.1.annotations", UNSET),
        ],
        id="tools/list",
    ),
    pytest.param(
        "tools/call",
        {
            "jsonrpc": "2.0",
            "id": 11,
            "result": {
                "content": ALL_BLOCKS,
                "structuredContent": {
                    "station": "wx-114",
                    "days": [
                        {"date": "2025-06-21", "high": 23.5, "low": 12, "rain": False},
                        {"date": "2025-06-22", "high": 19.0, "low": 11.5, "rain": True},
                    ],
                    "source": None,
                },
                "isError": False,
                "_meta": {"com.example/elapsedMs": 87},
            },
        },
        mcp.CallToolResult,
        [(f"content.{i}", cls) for i, cls in enumerate(BLOCK_CLASSES)]
        + [
            ("content.0.annotations", mcp.Annotations),
            ("content.0.annotations.last_modified", "2025-06-20T08:15:00Z"),
            ("content.1.mime_type", "image/png"),
            ("content.3.title", "WX-114 raw readings"),
            ("content.4.resource", mcp.TextResourceContents),
            ("content.5.resource", mcp.BlobResourceContents),
            ("structured_content.days.1.rain", True),
            ("is_error", False),
        ],
        id="tools/call",
    ),
    pytest.param(
        "tools/call",
        {
            "jsonrpc": "2.0",
            "id": 15,
            "result": {
                "content": [{"type": "text", "text": "Station wx-999 does not exist."}],
                "isError": True,
            },
        },
        mcp.CallToolResult,
        [
            ("is_error", True),
            ("structured_content", UNSET),
            ("content.0.text", "Station wx-999 does not exist."),
        ],
        id="tools/call/is-error",
    ),
    pytest.param(
        "logging/setLevel", {"jsonrpc": "2.0", "id": 12, "result": {}}, mcp.Result, [], id="logging/setLevel"
    ),
    pytest.param(
        "completion/complete",
        {
            "jsonrpc": "2.0",
            "id": 13,
            "result": {
                "completion": {"values": ["4h", "48h"], "total": 2, "hasMore": False},
                "_meta": {"com.example/source": "history"},
            },
        },
        mcp.CompleteResult,
        [
            ("completion", mcp.CompleteResultCompletion),
            ("completion.values", ["4h", "48h"]),
            ("completion.has_more", False),
        ],
        id="completion/complete",
    ),
    pytest.param(
        "sampling/createMessage",
        {
            "jsonrpc": "2.0",
            "id": "sample-31",
            "result": {
                "role": "assistant",
                "content": TEXT_BLOCK,
                "model": "claude-sonnet-4",
                "stopReason": "endTurn",
                "_meta": {"com.example/tokens": 37},
            },
        },
        mcp.CreateMessageResult,
        [("content", mcp.TextContent), ("content.annotations.priority", 0.75), ("stop_reason", "endTurn")],
        id="sampling/createMessage/text",
    ),
    pytest.param(
        "sampling/createMessage",
        {
            "jsonrpc": "2.0",
            "id": "sample-32",
            "result": {
                "role": "assistant",
                "content": IMAGE_BLOCK,
                "model": "image-gen-2",
                "stopReason": "complete",
            },
        },
        mcp.CreateMessageResult,
        [("content", mcp.ImageContent), ("content.data", PNG_B64), ("model", "image-gen-2")],
        id="sampling/createMessage/image",
    ),
    pytest.param(
        "sampling/createMessage",
        {
            "jsonrpc": "2.0",
            "id": "sample-33",
            "result": {
                "role": "user",
                "content": AUDIO_BLOCK,
                "model": "tts-narrator",
                "_meta": {"voice": "alto"},
            },
        },
        mcp.CreateMessageResult,
        [("content", mcp.AudioContent), ("role", "user"), ("stop_reason", UNSET)],
        id="sampling/createMessage/audio",
    ),
    pytest.param(
        "roots/list",
        {
            "jsonrpc": "2.0",
            "id": 40,
            "result": {
                "roots": [
                    {"uri": "file:///home/ana/projects/weather", "name": "weather", "_meta": {"vcs": "git"}},
                    {"uri": "file:///home/ana/datasets"},
                ],
                "_meta": {"com.example/workspace": "default"},
            },
        },
        mcp.ListRootsResult,
        [("roots.0", mcp.Root), ("roots.0.name", "weather"), ("roots.1.name", UNSET)],
        id="roots/list",
    ),
    pytest.param(
        "elicitation/create",
        {
            "jsonrpc": "2.0",
            "id": 42,
            "result": {
                "action": "accept",
                "content": {"email": "ana@example.org", "copies": 2, "attachCharts": True, "format": "pdf"},
                "_meta": {"com.example/uiMs": 5400},
            },
        },
        mcp.ElicitResult,
        [("action", "accept"), ("content.copies", 2), ("content.attachCharts", True)],
        id="elicitation/create/accept",
    ),
    pytest.param(
        "elicitation/create",
        {"jsonrpc": "2.0", "id": 43, "result": {"action": "decline"}},
        mcp.ElicitResult,
        [("action", "decline"), ("content", UNSET)],
        id="elicitation/create/decline",
    ),
    pytest.param(
        "elicitation/create",
        {"jsonrpc": "2.0", "id": 44, "result": {"action": "cancel"}},
        mcp.ElicitResult,
        [("action", "cancel")],
        id="elicitation/create/cancel",
    ),
]

# -- notifications -------------------------------------------------------------------------------

NOTIFICATION_SAMPLES = [
    pytest.param(
        "client",
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {
                "requestId": 11,
                "reason": "User closed the forecast panel.",
                "_meta": {"com.example/closedBy": "esc"},
            },
        },
        mcp.CancelledNotificationParams,
        [
            ("request_id", 11),
            ("reason", "User closed the forecast panel."),
            ("meta", {"com.example/closedBy": "esc"}),
        ],
        id="notifications/cancelled/from-client",
    ),
    pytest.param(
        "server",
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "sample-31"}},
        mcp.CancelledNotificationParams,
        [("request_id", "sample-31"), ("reason", UNSET)],
        id="notifications/cancelled/from-server",
    ),
    pytest.param(
        "client",
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        dict,
        [],
        id="notifications/initialized",
    ),
    pytest.param(
        "client",
        {
            "jsonrpc": "2.0",
            "method": "notifications/initialized",
            "params": {"_meta": {"com.example/startupMs": 412}},
        },
        dict,
        [(("_meta", "com.example/startupMs"), 412)],
        id="notifications/initialized/with-meta",
    ),
    pytest.param(
        "server",
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {
                "level": "error",
                "logger": "station.wx-114",
                "data": {"event": "sensor_timeout", "sensor": "anemometer", "retries": 3, "lastSeen": None},
                "_meta": {"com.example/seq": 8812},
            },
        },
        mcp.LoggingMessageNotificationParams,
        [("level", "error"), ("logger", "station.wx-114"), ("data.retries", 3)],
        id="notifications/message",
    ),
    pytest.param(
        "server",
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "debug", "data": "cache warmed"},
        },
        mcp.LoggingMessageNotificationParams,
        [("data", "cache warmed"), ("logger", UNSET)],
        id="notifications/message/string-data",
    ),
    pytest.param(
        "server",
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {
                "progressToken": "fc-11",
                "progress": 40,
                "total": 120,
                "message": "Fetched 40 of 120 hours",
                "_meta": {"com.example/stage": "download"},
            },
        },
        mcp.ProgressNotificationParams,
        [
            ("progress_token", "fc-11"),
            ("progress", 40.0),
            ("total", 120.0),
            ("message", "Fetched 40 of 120 hours"),
        ],
        id="notifications/progress/from-server",
    ),
    pytest.param(
        "client",
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": 40, "progress": 0.5},
        },
        mcp.ProgressNotificationParams,
        [("progress_token", 40), ("progress", 0.5), ("total", UNSET)],
        id="notifications/progress/from-client",
    ),
    pytest.param(
        "server",
        {"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"},
        dict,
        [],
        id="notifications/prompts/list_changed",
    ),
    pytest.param(
        "server",
        {
            "jsonrpc": "2.0",
            "method": "notifications/resources/list_changed",
            "params": {"_meta": {"com.example/added": ["wx-120"]}},
        },
        dict,
        [(("_meta", "com.example/added"), ["wx-120"])],
        id="notifications/resources/list_changed",
    ),
    pytest.param(
        "server",
        {
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"uri": "weather://stations/wx-114/current", "_meta": {"com.example/revision": 5531}},
        },
        mcp.ResourceUpdatedNotificationParams,
        [("uri", "weather://stations/wx-114/current"), (("meta", "com.example/revision"), 5531)],
        id="notifications/resources/updated",
    ),
    pytest.param(
        "client",
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed", "params": {}},
        dict,
        [],
        id="notifications/roots/list_changed",
    ),
    pytest.param(
        "server",
        {
            "jsonrpc": "2.0",
            "method": "notifications/tools/list_changed",
            "params": {"_meta": {"reason": "plugin"}},
        },
        dict,
        [("_meta.reason", "plugin")],
        id="notifications/tools/list_changed",
    ),
]

# -- error responses -----------------------------------------------------------------------------

ERROR_SAMPLES = [
    pytest.param(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
        None,
        -32700,
        id="parse-error/id-null",
    ),
    pytest.param(
        {
            "jsonrpc": "2.0",
            "id": "get-brief",
            "error": {"code": -32601, "message": "Method not found: prompts/get"},
        },
        "get-brief",
        -32601,
        id="method-not-found",
    ),
    pytest.param(
        {
            "jsonrpc": "2.0",
            "id": 11,
            "error": {
                "code": -32602,
                "message": "Invalid params: `$.params.arguments.days` must be <= 7",
                "data": {"path": "$.params.arguments.days", "got": 14, "allowed": [1, 7]},
            },
        },
        11,
        -32602,
        id="invalid-params/with-data",
    ),
    pytest.param(
        {
            "jsonrpc": "2.0",
            "id": 5,
            "error": {
                "code": -32002,
                "message": "Resource not found",
                "data": {"uri": "file:///srv/missing.txt"},
            },
        },
        5,
        -32002,
        id="resource-not-found/with-data",
    ),
    pytest.param(
        {
            "jsonrpc": "2.0",
            "id": 12,
            "error": {"code": -32603, "message": "Internal error", "data": "disk full"},
        },
        12,
        -32603,
        id="internal-error/string-data",
    ),
    pytest.param(
        {
            "jsonrpc": "2.0",
            "id": "sample-31",
            "error": {"code": -1, "message": "User rejected sampling request", "data": None},
        },
        "sample-31",
        -1,
        id="user-rejected/null-data",
    ),
]


# -- the tests -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("sender", "message", "params_type", "checks"), REQUEST_SAMPLES)
def test_request_round_trips(
    sender: Side, message: dict[str, Any], params_type: type, checks: list[Check]
) -> None:
    spec = methods.REQUESTS[message["method"]]
    assert spec.direction.sent_by_client() if sender == "client" else spec.direction.sent_by_server()
    codec = Codec.for_version(VERSION, role=other(sender))
    decoded = codec.decode(wire(message))
    assert isinstance(decoded, Request)
    assert decoded.id == message["id"]
    assert decoded.method == message["method"]
    params = codec.request_params(decoded)
    assert isinstance(params, params_type)
    check(params, checks)
    # The one-pass path gives the same typed message as the two stages.
    typed = codec.decode_typed(wire(message))
    assert isinstance(typed, TypedRequest)
    assert (typed.id, typed.method, typed.params) == (decoded.id, decoded.method, params)
    # An absent params member decodes as the defaults; a peer forwarding it leaves it absent.
    again = Codec.encode_request(decoded.id, decoded.method, params if "params" in message else UNSET)
    assert json.loads(again) == message


@pytest.mark.parametrize(("method", "message", "result_type", "checks"), RESULT_SAMPLES)
def test_result_round_trips(
    method: str, message: dict[str, Any], result_type: type, checks: list[Check]
) -> None:
    spec = methods.REQUESTS[method]
    # The response travels back to whoever sent the request.
    receiver: Side = "client" if spec.direction.sent_by_client() else "server"
    codec = Codec.for_version(VERSION, role=receiver)
    decoded = codec.decode(wire(message))
    assert isinstance(decoded, Response)
    assert decoded.id == message["id"]
    result = codec.result(spec, decoded)
    assert isinstance(result, result_type)
    check(result, checks)
    assert json.loads(Codec.encode_result(decoded.id, result)) == message


@pytest.mark.parametrize(("sender", "message", "params_type", "checks"), NOTIFICATION_SAMPLES)
def test_notification_round_trips(
    sender: Side, message: dict[str, Any], params_type: type, checks: list[Check]
) -> None:
    spec = methods.NOTIFICATIONS[message["method"]]
    assert spec.direction.sent_by_client() if sender == "client" else spec.direction.sent_by_server()
    codec = Codec.for_version(VERSION, role=other(sender))
    decoded = codec.decode(wire(message))
    assert isinstance(decoded, Notification)
    params = codec.notification_params(decoded)
    assert isinstance(params, params_type)
    check(params, checks)
    typed = codec.decode_typed(wire(message))
    assert isinstance(typed, TypedNotification)
    assert (typed.method, typed.params) == (decoded.method, params)
    again = Codec.encode_notification(decoded.method, params if "params" in message else UNSET)
    assert json.loads(again) == message


@pytest.mark.parametrize(("message", "request_id", "code"), ERROR_SAMPLES)
@pytest.mark.parametrize("receiver", ["client", "server"])
def test_error_round_trips(
    message: dict[str, Any], request_id: int | str | None, code: int, receiver: Side
) -> None:
    codec = Codec.for_version(VERSION, role=receiver)
    decoded = codec.decode(wire(message))
    assert isinstance(decoded, ErrorResponse)
    assert decoded.id == request_id
    assert decoded.error.code == code
    assert decoded.error.message == message["error"]["message"]
    again = Codec.encode_error(decoded.id, decoded.error.code, decoded.error.message, decoded.error.data)
    assert json.loads(again) == message


@pytest.mark.parametrize(
    "where",
    [
        pytest.param(("isErorr",), id="result"),
        pytest.param(("content", 3, "sizeBytes"), id="resource-link"),
        pytest.param(("content", 5, "resource", "encoding"), id="blob-contents"),
        pytest.param(("content", 0, "annotations", "weight"), id="annotations"),
    ],
)
def test_the_comparison_sees_a_member_the_structs_drop(where: tuple[str | int, ...]) -> None:
    # Guards the guard: a member unknown to the structs is dropped on decode, and the
    # round-trip comparison above must notice that, or it would pass vacuously.
    (message,) = [m for name, m, _, _ in _values(RESULT_SAMPLES) if name == "tools/call" and m["id"] == 11]
    message = copy.deepcopy(message)
    dig(message["result"], where[:-1])[where[-1]] = "unknown to the schema"
    codec = Codec.for_version(VERSION, role="client")
    decoded = codec.decode(wire(message))
    assert isinstance(decoded, Response)
    again = json.loads(Codec.encode_result(decoded.id, codec.result(methods.TOOLS_CALL, decoded)))
    assert again != message
    dig(message["result"], where[:-1]).pop(where[-1])
    assert again == message


def _values(samples: Sequence[Any]) -> list[tuple[Any, ...]]:
    return [tuple(sample.values) for sample in samples]


def test_every_request_has_a_sample() -> None:
    assert {message["method"] for _, message, _, _ in _values(REQUEST_SAMPLES)} == set(methods.REQUESTS)
    assert len(methods.REQUESTS) == 16


def test_every_result_has_a_sample() -> None:
    assert {method for method, _, _, _ in _values(RESULT_SAMPLES)} == set(methods.REQUESTS)


def test_every_notification_has_a_sample() -> None:
    assert {message["method"] for _, message, _, _ in _values(NOTIFICATION_SAMPLES)} == set(
        methods.NOTIFICATIONS
    )
    assert len(methods.NOTIFICATIONS) == 9


def test_both_way_messages_are_sampled_from_both_sides() -> None:
    for samples, table in (
        (REQUEST_SAMPLES, methods.REQUESTS),
        (NOTIFICATION_SAMPLES, methods.NOTIFICATIONS),
    ):
        for method, spec in table.items():
            if spec.direction is Direction.BOTH:
                senders = {
                    sender for sender, message, _, _ in _values(samples) if message["method"] == method
                }
                assert senders == {"client", "server"}, method


def _results_of(method: str) -> list[dict[str, Any]]:
    return [message["result"] for name, message, _, _ in _values(RESULT_SAMPLES) if name == method]


def test_every_content_kind_is_sampled() -> None:
    (tool_result,) = [result for result in _results_of("tools/call") if not result.get("isError")]
    assert {_kind(block) for block in tool_result["content"]} == CONTENT_KINDS
    (prompt,) = _results_of("prompts/get")
    assert {_kind(message["content"]) for message in prompt["messages"]} == CONTENT_KINDS
    # A 2025-06-18 CreateMessageResult carries one text, image or audio block.
    sampled = {_kind(result["content"]) for result in _results_of("sampling/createMessage")}
    assert sampled == {"text", "image", "audio"}
    assert set(get_args(mcp.TextContentOrImageContentOrAudioContent)) == {
        mcp.TextContent,
        mcp.ImageContent,
        mcp.AudioContent,
    }


def test_content_kinds_match_the_schema() -> None:
    # A block kind added to the 2025-06-18 ContentBlock union needs a sample above.
    members = set(get_args(mcp.ContentBlock))
    assert members == set(BLOCK_CLASSES)
    assert {member.__struct_config__.tag for member in members} == {
        kind.split("/")[0] for kind in CONTENT_KINDS
    }
