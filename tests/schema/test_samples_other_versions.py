"""Hand-written sample messages for MCP 2024-11-05, 2025-03-26, 2025-11-25 and 2026-07-28.

The companion of ``test_samples_2025_06_18.py``: the same round trip (decode the whole message
with the version's codec, take the typed params / result, encode again, compare the JSON), for
every request, result and notification method of each version, with the samples written for
what each version has and the others lack:

* 2024-11-05: no audio, titles, ``structuredContent``, elicitation or resource links; a
  CallToolResult holds text, image and embedded resource blocks (anything else is unknown);
* 2025-03-26: audio content, tool annotations, the ``completions`` capability and JSON-RPC
  batches;
* 2025-11-25: icons, URL-mode elicitation and the enum schema kinds, sampling with tools
  (``tool_use`` / ``tool_result`` blocks and block arrays), tasks;
* 2026-07-28: ``server/discover``, ``resultType`` on every result, ``InputRequiredResult`` with
  embedded input requests, ``subscriptions/listen``, the request ``_meta`` that carries the
  protocol version and client capabilities, cache hints, error responses without an id.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from types import ModuleType
from typing import Any, get_args, get_origin, get_type_hints

import pytest
from msgspec import UNSET

from codegen.pins import load_pins
from mcpbind.protocol.unions import UnknownContent
from mcpbind.protocol.wire import (
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    Codec,
    ErrorResponse,
    Notification,
    Request,
    Response,
    WireError,
)
from mcpbind.schema import load
from mcpbind.schema import v2024_11_05 as v24
from mcpbind.schema import v2025_03_26 as v25a
from mcpbind.schema import v2025_11_25 as v25c
from mcpbind.schema import v2026_07_28 as v26
from tests.schema.sample_checks import Check, Side, check, other, wire

# (attribute path, expected value); a path is dotted attribute names, list indexes and dict keys,
# or a tuple of them (for keys with dots); an expected class is an isinstance check.

MODULES: dict[str, ModuleType] = {
    "2024-11-05": v24,
    "2025-03-26": v25a,
    "2025-11-25": v25c,
    "2026-07-28": v26,
}
VERSIONS = list(MODULES)

PNG_B64 = base64.b64encode(
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x02\x00\x00\x00\x01\x80\x08\x06"
).decode()
JPEG_B64 = base64.b64encode(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00H\x00H\x00\x00").decode()
OGG_B64 = base64.b64encode(b"OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00standup-note").decode()
TAR_B64 = base64.b64encode(b"build-artifacts/\x00\x00\x00\x00\x00\x000000755\x000001750\x00").decode()


# -- helpers that wrap the literal params / results into whole JSON-RPC messages -----------------


def _req(
    version: str,
    sender: Side,
    id: int | str,
    method: str,
    params: dict[str, Any] | None,
    expected: Any,
    checks: Sequence[Check] = (),
    variant: str = "",
    marks: Any = (),
) -> Any:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    name = f"{version}/{method}" + (f"/{variant}" if variant else "")
    return pytest.param(version, sender, message, expected, list(checks), id=name, marks=marks)


def _res(
    version: str,
    method: str,
    id: int | str,
    result: dict[str, Any],
    expected: Any,
    checks: Sequence[Check] = (),
    variant: str = "",
    marks: Any = (),
) -> Any:
    message = {"jsonrpc": "2.0", "id": id, "result": result}
    name = f"{version}/{method}" + (f"/{variant}" if variant else "")
    return pytest.param(version, method, message, expected, list(checks), id=name, marks=marks)


def _note(
    version: str,
    sender: Side,
    method: str,
    params: dict[str, Any] | None,
    expected: Any,
    checks: Sequence[Check] = (),
    variant: str = "",
) -> Any:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    name = f"{version}/{method}" + (f"/{variant}" if variant else "")
    return pytest.param(version, sender, message, expected, list(checks), id=name)


def _err(version: str, message: dict[str, Any], variant: str, marks: Any = ()) -> Any:
    return pytest.param(version, message, id=f"{version}/{variant}", marks=marks)


def _values(samples: Sequence[Any]) -> list[tuple[Any, ...]]:
    return [tuple(sample.values) for sample in samples]


# == the messages 2024-11-05 and 2025-03-26 share (a git hosting server) =============================


def _classic(version: str) -> tuple[list[Any], list[Any], list[Any]]:
    """Requests, results and notifications whose shape is the same in 2024-11-05 and 2025-03-26."""
    mod = MODULES[version]
    requests = [
        _req(
            version,
            "client",
            1,
            "ping",
            {"_meta": {"progressToken": 1}},
            dict,
            [("_meta.progressToken", 1)],
            "from-client",
        ),
        _req(version, "server", "srv-ping-3", "ping", None, dict, [], "from-server"),
        _req(
            version,
            "client",
            2,
            "resources/list",
            {"cursor": "cmVwb3M6MjU="},
            mod.ListResourcesRequestParams,
            [("cursor", "cmVwb3M6MjU=")],
        ),
        _req(
            version,
            "client",
            3,
            "resources/templates/list",
            None,
            mod.ListResourceTemplatesRequestParams,
            [("cursor", UNSET)],
        ),
        _req(
            version,
            "client",
            4,
            "resources/read",
            {"uri": "git://acme/widgets/blob/main/README.md", "_meta": {"progressToken": "readme"}},
            mod.ReadResourceRequestParams,
            [("uri", "git://acme/widgets/blob/main/README.md"), ("meta.progressToken", "readme")],
        ),
        _req(
            version,
            "client",
            5,
            "resources/subscribe",
            {"uri": "git://acme/widgets/refs/heads/main"},
            mod.SubscribeRequestParams,
            [("uri", "git://acme/widgets/refs/heads/main")],
        ),
        _req(
            version,
            "client",
            6,
            "resources/unsubscribe",
            {"uri": "git://acme/widgets/refs/heads/main"},
            mod.UnsubscribeRequestParams,
            [("uri", "git://acme/widgets/refs/heads/main")],
        ),
        _req(
            version,
            "client",
            7,
            "prompts/list",
            {"cursor": "p2"},
            mod.ListPromptsRequestParams,
            [("cursor", "p2")],
        ),
        _req(
            version,
            "client",
            8,
            "prompts/get",
            {
                "name": "review_pull_request",
                "arguments": {"repo": "acme/widgets", "number": "412"},
                "_meta": {"com.acme/locale": "en-GB"},
            },
            mod.GetPromptRequestParams,
            [("arguments.number", "412"), (("meta", "com.acme/locale"), "en-GB")],
        ),
        _req(version, "client", 9, "tools/list", None, mod.ListToolsRequestParams, [("cursor", UNSET)]),
        _req(
            version,
            "client",
            10,
            "tools/list",
            {"cursor": "dG9vbHM6MTA="},
            mod.ListToolsRequestParams,
            [("cursor", "dG9vbHM6MTA=")],
            "cursor",
        ),
        _req(
            version,
            "client",
            11,
            "tools/call",
            {
                "name": "create_issue",
                "arguments": {
                    "repo": "acme/widgets",
                    "title": "Flaky test in ci/lint",
                    "labels": ["ci", "flaky"],
                    "assignee": None,
                    "priority": 2,
                },
                "_meta": {"progressToken": 11},
            },
            mod.CallToolRequestParams,
            [
                ("name", "create_issue"),
                ("arguments.labels", ["ci", "flaky"]),
                ("arguments.assignee", None),
                ("meta.progressToken", 11),
            ],
        ),
        _req(
            version,
            "client",
            12,
            "logging/setLevel",
            {"level": "info", "_meta": {}},
            mod.SetLevelRequestParams,
            [("level", "info")],
        ),
        _req(
            version,
            "client",
            13,
            "completion/complete",
            {
                "ref": {"type": "ref/resource", "uri": "git://acme/{repo}/blob/{branch}/{path}"},
                "argument": {"name": "branch", "value": "rel"},
            },
            mod.CompleteRequestParams,
            [("ref", mod.ResourceReference), ("argument.value", "rel")],
            "resource-ref",
        ),
        _req(
            version,
            "client",
            14,
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "review_pull_request"},
                "argument": {"name": "repo", "value": "acme/w"},
            },
            mod.CompleteRequestParams,
            [("ref", mod.PromptReference), ("ref.name", "review_pull_request")],
            "prompt-ref",
        ),
        _req(version, "server", "roots-1", "roots/list", None, dict, []),
    ]
    results = [
        _res(version, "ping", 1, {}, mod.Result, [("meta", UNSET)]),
        _res(version, "resources/subscribe", 5, {}, mod.Result),
        _res(
            version,
            "resources/unsubscribe",
            6,
            {"_meta": {"com.acme/remaining": 0}},
            mod.Result,
            [(("meta", "com.acme/remaining"), 0)],
        ),
        _res(version, "logging/setLevel", 12, {}, mod.Result),
        _res(
            version,
            "resources/list",
            2,
            {
                "resources": [
                    {
                        "uri": "git://acme/widgets/blob/main/README.md",
                        "name": "widgets README",
                        "description": "Project overview of acme/widgets",
                        "mimeType": "text/markdown",
                        "size": 5120,
                        "annotations": {"audience": ["user", "assistant"], "priority": 0.8},
                    },
                    {"uri": "git://acme/widgets/blob/main/logo.png", "name": "logo", "mimeType": "image/png"},
                ],
                "nextCursor": "cmVwb3M6NTA=",
                "_meta": {"com.acme/scannedRepos": 3},
            },
            mod.ListResourcesResult,
            [
                ("resources.0", mod.Resource),
                ("resources.0.annotations.priority", 0.8),
                ("resources.0.size", 5120),
                ("next_cursor", "cmVwb3M6NTA="),
            ],
        ),
        _res(
            version,
            "resources/templates/list",
            3,
            {
                "resourceTemplates": [
                    {
                        "uriTemplate": "git://acme/{repo}/blob/{branch}/{path}",
                        "name": "file at branch",
                        "description": "Any file of any acme repository at a branch",
                        "mimeType": "text/plain",
                        "annotations": {"audience": ["assistant"], "priority": 0.3},
                    }
                ],
                "nextCursor": "tpl-2",
            },
            mod.ListResourceTemplatesResult,
            [
                ("resource_templates.0", mod.ResourceTemplate),
                ("resource_templates.0.annotations.audience", ["assistant"]),
            ],
        ),
        _res(
            version,
            "resources/read",
            4,
            {
                "contents": [
                    {
                        "uri": "git://acme/widgets/blob/main/README.md",
                        "mimeType": "text/markdown",
                        "text": "# widgets\n\nSmall reusable widgets.\n",
                    },
                    {
                        "uri": "git://acme/widgets/blob/main/logo.png",
                        "mimeType": "image/png",
                        "blob": PNG_B64,
                    },
                ],
                "_meta": {"com.acme/commit": "9f3c2e1"},
            },
            mod.ReadResourceResult,
            [
                ("contents.0", mod.TextResourceContents),
                ("contents.1", mod.BlobResourceContents),
                ("contents.1.blob", PNG_B64),
            ],
        ),
        _res(
            version,
            "prompts/list",
            7,
            {
                "prompts": [
                    {
                        "name": "review_pull_request",
                        "description": "Review a pull request for bugs and style",
                        "arguments": [
                            {"name": "repo", "description": "owner/name", "required": True},
                            {"name": "number", "description": "Pull request number", "required": True},
                            {"name": "focus", "required": False},
                        ],
                    },
                    {"name": "release_notes"},
                ],
                "nextCursor": "p3",
                "_meta": {"com.acme/locale": "en"},
            },
            mod.ListPromptsResult,
            [
                ("prompts.0", mod.Prompt),
                ("prompts.0.arguments.2.required", False),
                ("prompts.1.description", UNSET),
            ],
        ),
        _res(
            version,
            "completion/complete",
            13,
            {
                "completion": {"values": ["release/1.4", "release/1.5"], "total": 9, "hasMore": True},
                "_meta": {"com.acme/ms": 3},
            },
            mod.CompleteResult,
            [
                ("completion.values", ["release/1.4", "release/1.5"]),
                ("completion.total", 9),
                ("completion.has_more", True),
            ],
        ),
        _res(
            version,
            "roots/list",
            "roots-1",
            {
                "roots": [
                    {"uri": "file:///home/dev/src/widgets", "name": "widgets checkout"},
                    {"uri": "file:///home/dev/src/gadgets"},
                ]
            },
            mod.ListRootsResult,
            [("roots.0", mod.Root), ("roots.0.name", "widgets checkout"), ("roots.1.name", UNSET)],
        ),
    ]
    notes = [
        _note(
            version,
            "client",
            "notifications/cancelled",
            {"requestId": 11, "reason": "User pressed Esc", "_meta": {"com.acme/ui": "palette"}},
            mod.CancelledNotificationParams,
            [("request_id", 11), ("meta", {"com.acme/ui": "palette"})],
            "from-client",
        ),
        _note(
            version,
            "server",
            "notifications/cancelled",
            {"requestId": "roots-1"},
            mod.CancelledNotificationParams,
            [("request_id", "roots-1"), ("reason", UNSET)],
            "from-server",
        ),
        _note(version, "client", "notifications/initialized", None, dict),
        _note(
            version,
            "server",
            "notifications/message",
            {
                "level": "warning",
                "logger": "git.fetch",
                "data": {"remote": "origin", "retryInS": 30, "error": "timeout"},
                "_meta": {"com.acme/seq": 4},
            },
            mod.LoggingMessageNotificationParams,
            [("level", "warning"), ("data.retryInS", 30)],
        ),
        _note(version, "server", "notifications/prompts/list_changed", None, dict),
        _note(
            version,
            "server",
            "notifications/resources/list_changed",
            {"_meta": {"com.acme/newRepo": "acme/gizmos"}},
            dict,
            [(("_meta", "com.acme/newRepo"), "acme/gizmos")],
        ),
        _note(
            version,
            "server",
            "notifications/resources/updated",
            {"uri": "git://acme/widgets/refs/heads/main", "_meta": {"com.acme/sha": "77ab01e"}},
            mod.ResourceUpdatedNotificationParams,
            [("uri", "git://acme/widgets/refs/heads/main")],
        ),
        _note(version, "client", "notifications/roots/list_changed", None, dict),
        _note(version, "server", "notifications/tools/list_changed", {}, dict),
    ]
    return requests, results, notes


# == 2024-11-05 ======================================================================================

V = "2024-11-05"
_R24, _S24, _N24 = _classic(V)

REQUESTS_2024 = [
    *_R24,
    _req(
        V,
        "client",
        0,
        "initialize",
        {
            "protocolVersion": "2024-11-05",
            "capabilities": {
                "roots": {"listChanged": True},
                "sampling": {},
                "experimental": {"com.acme/diffs": {"context": 3}},
            },
            "clientInfo": {"name": "gitdesk", "version": "1.8.2"},
            "_meta": {"com.acme/installId": "5e0f"},
        },
        v24.InitializeRequestParams,
        [
            ("client_info", v24.Implementation),
            ("client_info.version", "1.8.2"),
            ("capabilities.roots.list_changed", True),
        ],
    ),
    _req(
        V,
        "server",
        "sample-1",
        "sampling/createMessage",
        {
            "messages": [
                {
                    "role": "user",
                    "content": {
                        "type": "text",
                        "text": "Describe this diff screenshot.",
                        "annotations": {"audience": ["assistant"], "priority": 1},
                    },
                },
                {
                    "role": "user",
                    "content": {
                        "type": "image",
                        "data": PNG_B64,
                        "mimeType": "image/png",
                        "annotations": {"priority": 0.5},
                    },
                },
            ],
            "modelPreferences": {
                "hints": [{"name": "claude-3-5-sonnet"}],
                "costPriority": 0.4,
                "speedPriority": 0.6,
                "intelligencePriority": 0.7,
            },
            "systemPrompt": "You review code.",
            "includeContext": "none",
            "temperature": 0.0,
            "maxTokens": 400,
            "stopSequences": ["---"],
            "metadata": {"com.acme/pr": 412},
            "_meta": {"progressToken": "sample-1"},
        },
        v24.CreateMessageRequestParams,
        [
            ("messages.0.content", v24.TextContent),
            ("messages.1.content", v24.ImageContent),
            ("messages.1.content.annotations.priority", 0.5),
            ("temperature", 0.0),
        ],
    ),
]

_BLOCKS_2024: list[dict[str, Any]] = [
    {
        "type": "text",
        "text": "Opened issue #977 in acme/widgets.",
        "annotations": {"audience": ["user"], "priority": 0.9},
    },
    {
        "type": "image",
        "data": PNG_B64,
        "mimeType": "image/png",
        "annotations": {"audience": ["user", "assistant"], "priority": 0.2},
    },
    {
        "type": "resource",
        "resource": {
            "uri": "git://acme/widgets/issues/977",
            "mimeType": "application/json",
            "text": '{"number": 977, "state": "open"}',
        },
        "annotations": {"audience": ["assistant"], "priority": 0.6},
    },
    {
        "type": "resource",
        "resource": {
            "uri": "git://acme/widgets/blob/main/logo.png",
            "mimeType": "image/png",
            "blob": PNG_B64,
        },
    },
]

RESULTS_2024 = [
    *_S24,
    _res(
        V,
        "initialize",
        0,
        {
            "protocolVersion": "2024-11-05",
            "capabilities": {
                "logging": {},
                "prompts": {"listChanged": True},
                "resources": {"subscribe": True, "listChanged": True},
                "tools": {"listChanged": True},
                "experimental": {"com.acme/webhooks": {}},
            },
            "serverInfo": {"name": "acme-git-mcp", "version": "0.3.0"},
            "instructions": "Repositories are addressed as owner/name.",
            "_meta": {"com.acme/region": "eu-1"},
        },
        v24.InitializeResult,
        [
            ("server_info.name", "acme-git-mcp"),
            ("capabilities.resources.subscribe", True),
            ("instructions", "Repositories are addressed as owner/name."),
        ],
    ),
    _res(
        V,
        "prompts/get",
        8,
        {
            "description": "Review of acme/widgets#412",
            "messages": [
                {"role": "user" if i != 1 else "assistant", "content": block}
                for i, block in enumerate(_BLOCKS_2024)
            ],
            "_meta": {"com.acme/template": "v2"},
        },
        v24.GetPromptResult,
        [
            ("messages.0.content", v24.TextContent),
            ("messages.1.content", v24.ImageContent),
            ("messages.2.content", v24.EmbeddedResource),
            ("messages.2.content.resource", v24.TextResourceContents),
            ("messages.3.content.resource", v24.BlobResourceContents),
        ],
    ),
    _res(
        V,
        "tools/list",
        9,
        {
            "tools": [
                {
                    "name": "create_issue",
                    "description": "Open an issue in a repository",
                    "inputSchema": {
                        "type": "object",
                        "properties": {
                            "repo": {"type": "string"},
                            "title": {"type": "string"},
                            "labels": {"type": "array", "items": {"type": "string"}},
                        },
                        "required": ["repo", "title"],
                    },
                },
                {
                    "name": "list_branches",
                    "inputSchema": {"type": "object", "properties": {"repo": {"type": "string"}}},
                },
            ],
            "nextCursor": "dG9vbHM6MjA=",
        },
        v24.ListToolsResult,
        [
            ("tools.0", v24.Tool),
            ("tools.0.input_schema.required", ["repo", "title"]),
            ("tools.1.description", UNSET),
        ],
    ),
    _res(
        V,
        "tools/call",
        11,
        {"content": _BLOCKS_2024, "isError": False, "_meta": {"com.acme/issue": 977}},
        v24.CallToolResult,
        [
            ("content.0", v24.TextContent),
            ("content.0.annotations.audience", ["user"]),
            ("content.1", v24.ImageContent),
            ("content.2", v24.EmbeddedResource),
            ("content.2.resource", v24.TextResourceContents),
            ("content.3.resource", v24.BlobResourceContents),
            ("is_error", False),
        ],
    ),
    _res(
        V,
        "tools/call",
        15,
        {
            "content": [
                {"type": "text", "text": "Recorded the stand-up note."},
                {"type": "audio", "data": OGG_B64, "mimeType": "audio/ogg"},
                {"type": "resource_link", "uri": "git://acme/widgets/wiki/standup", "name": "standup"},
            ]
        },
        v24.CallToolResult,
        [
            ("content.0", v24.TextContent),
            ("content.1", UnknownContent),
            ("content.1.type", "audio"),
            ("content.2", UnknownContent),
        ],
        "blocks-2024-11-05-does-not-know",
    ),
    _res(
        V,
        "sampling/createMessage",
        "sample-1",
        {
            "role": "assistant",
            "content": {
                "type": "text",
                "text": "The diff renames two helpers.",
                "annotations": {"priority": 0.7},
            },
            "model": "claude-3-5-sonnet",
            "stopReason": "endTurn",
            "_meta": {"tokens": 41},
        },
        v24.CreateMessageResult,
        [("content", v24.TextContent), ("stop_reason", "endTurn")],
        "text",
    ),
    _res(
        V,
        "sampling/createMessage",
        "sample-2",
        {
            "role": "assistant",
            "content": {"type": "image", "data": JPEG_B64, "mimeType": "image/jpeg"},
            "model": "sketcher-1",
        },
        v24.CreateMessageResult,
        [("content", v24.ImageContent), ("content.mime_type", "image/jpeg")],
        "image",
    ),
]

NOTIFICATIONS_2024 = [
    *_N24,
    _note(
        V,
        "server",
        "notifications/progress",
        {"progressToken": 1, "progress": 3, "total": 10, "_meta": {"com.acme/phase": "index"}},
        v24.ProgressNotificationParams,
        [("progress", 3.0), ("total", 10.0)],
        "from-server",
    ),
    _note(
        V,
        "client",
        "notifications/progress",
        {"progressToken": "roots-scan", "progress": 0.25},
        v24.ProgressNotificationParams,
        [("progress_token", "roots-scan")],
        "from-client",
    ),
]

ERRORS_2024 = [
    _err(
        V,
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
        "parse-error/id-null",
    ),
    _err(
        V,
        {
            "jsonrpc": "2.0",
            "id": 11,
            "error": {"code": -32602, "message": "Unknown repository", "data": {"repo": "acme/nope"}},
        },
        "invalid-params/with-data",
    ),
]


# == 2025-03-26 ======================================================================================

V = "2025-03-26"
_R25A, _S25A, _N25A = _classic(V)

_BLOCKS_2025_03: list[dict[str, Any]] = [
    {
        "type": "text",
        "text": "Meeting moved to 14:30.",
        "annotations": {"audience": ["user"], "priority": 1.0},
    },
    {
        "type": "image",
        "data": JPEG_B64,
        "mimeType": "image/jpeg",
        "annotations": {"audience": ["user"], "priority": 0.3},
    },
    {
        "type": "audio",
        "data": OGG_B64,
        "mimeType": "audio/ogg",
        "annotations": {"audience": ["assistant"], "priority": 0.5},
    },
    {
        "type": "resource",
        "resource": {
            "uri": "cal://team/events/2025-04-02/standup",
            "mimeType": "text/calendar",
            "text": "BEGIN:VEVENT\nSUMMARY:Stand-up\nEND:VEVENT\n",
        },
        "annotations": {"audience": ["assistant"], "priority": 0.4},
    },
    {
        "type": "resource",
        "resource": {
            "uri": "cal://team/attachments/agenda.pdf",
            "mimeType": "application/pdf",
            "blob": TAR_B64,
        },
    },
]

REQUESTS_2025_03 = [
    *_R25A,
    _req(
        V,
        "client",
        0,
        "initialize",
        {
            "protocolVersion": "2025-03-26",
            "capabilities": {
                "roots": {"listChanged": False},
                "sampling": {},
                "experimental": {"com.example.cal/tz": {"default": "Europe/Berlin"}},
            },
            "clientInfo": {"name": "calendar-assistant", "version": "2.0.0-beta.3"},
        },
        v25a.InitializeRequestParams,
        [("protocol_version", "2025-03-26"), ("capabilities.roots.list_changed", False)],
    ),
    _req(
        V,
        "server",
        "sample-9",
        "sampling/createMessage",
        {
            "messages": [
                {
                    "role": "user",
                    "content": {
                        "type": "audio",
                        "data": OGG_B64,
                        "mimeType": "audio/ogg",
                        "annotations": {"audience": ["assistant"], "priority": 0.9},
                    },
                },
                {
                    "role": "user",
                    "content": {"type": "text", "text": "Transcribe and list the action items."},
                },
            ],
            "modelPreferences": {"hints": [{"name": "whisper"}, {}], "speedPriority": 1},
            "includeContext": "allServers",
            "maxTokens": 800,
            "_meta": {"progressToken": 9},
        },
        v25a.CreateMessageRequestParams,
        [
            ("messages.0.content", v25a.AudioContent),
            ("messages.0.content.annotations", v25a.Annotations),
            ("model_preferences.hints.1.name", UNSET),
        ],
    ),
]

RESULTS_2025_03 = [
    *_S25A,
    _res(
        V,
        "initialize",
        0,
        {
            "protocolVersion": "2025-03-26",
            "capabilities": {
                "logging": {},
                "completions": {},
                "prompts": {"listChanged": False},
                "resources": {"subscribe": False, "listChanged": True},
                "tools": {"listChanged": True},
            },
            "serverInfo": {"name": "team-calendar", "version": "5.1.0"},
            "instructions": "Times are ISO 8601 in the calendar's time zone.",
        },
        v25a.InitializeResult,
        [
            ("capabilities.completions", {}),
            ("capabilities.tools.list_changed", True),
            ("server_info.version", "5.1.0"),
        ],
    ),
    _res(
        V,
        "prompts/get",
        8,
        {
            "description": "Weekly planning",
            "messages": [
                {"role": "assistant" if i % 2 else "user", "content": block}
                for i, block in enumerate(_BLOCKS_2025_03)
            ],
        },
        v25a.GetPromptResult,
        [
            ("messages.2.content", v25a.AudioContent),
            ("messages.3.content.resource", v25a.TextResourceContents),
            ("messages.4.content.resource", v25a.BlobResourceContents),
        ],
    ),
    _res(
        V,
        "tools/list",
        9,
        {
            "tools": [
                {
                    "name": "move_event",
                    "description": "Move a calendar event to a new start time",
                    "inputSchema": {
                        "type": "object",
                        "properties": {
                            "eventId": {"type": "string"},
                            "start": {"type": "string", "format": "date-time"},
                        },
                        "required": ["eventId", "start"],
                    },
                    "annotations": {
                        "title": "Move event",
                        "readOnlyHint": False,
                        "destructiveHint": False,
                        "idempotentHint": True,
                        "openWorldHint": False,
                    },
                },
                {
                    "name": "free_slots",
                    "inputSchema": {"type": "object"},
                    "annotations": {"readOnlyHint": True},
                },
            ]
        },
        v25a.ListToolsResult,
        [
            ("tools.0.annotations", v25a.ToolAnnotations),
            ("tools.0.annotations.idempotent_hint", True),
            ("tools.1.annotations.title", UNSET),
        ],
    ),
    _res(
        V,
        "tools/call",
        11,
        {"content": _BLOCKS_2025_03, "isError": False, "_meta": {"com.example.cal/etag": 'W/"44"'}},
        v25a.CallToolResult,
        [
            ("content.0", v25a.TextContent),
            ("content.1", v25a.ImageContent),
            ("content.2", v25a.AudioContent),
            ("content.2.annotations.priority", 0.5),
            ("content.3.resource", v25a.TextResourceContents),
            ("content.4.resource", v25a.BlobResourceContents),
        ],
    ),
    _res(
        V,
        "tools/call",
        16,
        {
            "content": [
                {
                    "type": "resource_link",
                    "uri": "cal://team/events/2025-04-02/standup",
                    "name": "standup",
                    "title": "Stand-up",
                }
            ],
            "isError": True,
        },
        v25a.CallToolResult,
        [("content.0", UnknownContent), ("content.0.title", "Stand-up"), ("is_error", True)],
        "resource-link-unknown-in-2025-03-26",
    ),
    _res(
        V,
        "sampling/createMessage",
        "sample-9",
        {
            "role": "assistant",
            "content": {"type": "audio", "data": OGG_B64, "mimeType": "audio/ogg"},
            "model": "voice-1",
            "stopReason": "maxTokens",
        },
        v25a.CreateMessageResult,
        [("content", v25a.AudioContent), ("stop_reason", "maxTokens")],
        "audio",
    ),
]

NOTIFICATIONS_2025_03 = [
    *_N25A,
    _note(
        V,
        "server",
        "notifications/progress",
        {"progressToken": "sync-7", "progress": 45, "total": 180, "message": "Synced 45 of 180 events"},
        v25a.ProgressNotificationParams,
        [("message", "Synced 45 of 180 events")],
        "from-server",
    ),
    _note(
        V,
        "client",
        "notifications/progress",
        {"progressToken": 2, "progress": 1, "message": "Roots scanned"},
        v25a.ProgressNotificationParams,
        [("progress_token", 2)],
        "from-client",
    ),
]

ERRORS_2025_03 = [
    _err(
        V,
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32600, "message": "Invalid request", "data": {"reason": "missing jsonrpc"}},
        },
        "invalid-request/id-null",
    ),
    _err(
        V,
        {"jsonrpc": "2.0", "id": "c-3", "error": {"code": -32601, "message": "Method not found"}},
        "method-not-found",
    ),
]


# == 2025-11-25 (a CI build server) ===================================================================

V = "2025-11-25"

ICONS: list[dict[str, Any]] = [
    {
        "src": "https://ci.example.com/static/icon-light.svg",
        "mimeType": "image/svg+xml",
        "sizes": ["any"],
        "theme": "light",
    },
    {
        "src": f"data:image/png;base64,{PNG_B64}",
        "mimeType": "image/png",
        "sizes": ["48x48", "96x96"],
        "theme": "dark",
    },
]
TASK_WORKING: dict[str, Any] = {
    "taskId": "task-7f3a",
    "status": "working",
    "statusMessage": "Running 212 of 480 tests",
    "createdAt": "2025-11-25T09:00:00Z",
    "lastUpdatedAt": "2025-11-25T09:03:12Z",
    "ttl": 3600000,
    "pollInterval": 5000,
}
TASK_DONE: dict[str, Any] = {
    "taskId": "task-66c0",
    "status": "completed",
    "createdAt": "2025-11-24T22:10:00Z",
    "lastUpdatedAt": "2025-11-24T22:31:45Z",
    "ttl": None,
}
_BLOCKS_2025_11: list[dict[str, Any]] = [
    {
        "type": "text",
        "text": "Build #1832 passed in 6m12s.",
        "annotations": {"audience": ["user"], "priority": 0.9, "lastModified": "2025-11-25T09:06:12Z"},
        "_meta": {"ci/build": 1832},
    },
    {
        "type": "image",
        "data": PNG_B64,
        "mimeType": "image/png",
        "annotations": {"audience": ["user"]},
        "_meta": {"ci/chart": "duration"},
    },
    {"type": "audio", "data": OGG_B64, "mimeType": "audio/ogg", "_meta": {"ci/chime": True}},
    {
        "type": "resource_link",
        "uri": "https://ci.example.com/builds/1832/junit.xml",
        "name": "junit-1832",
        "title": "JUnit report #1832",
        "description": "480 tests, 0 failures",
        "mimeType": "application/xml",
        "size": 90211,
        "icons": [ICONS[0]],
        "annotations": {"audience": ["assistant"], "priority": 0.5},
        "_meta": {"ci/retention": "30d"},
    },
    {
        "type": "resource",
        "resource": {
            "uri": "https://ci.example.com/builds/1832/log.txt",
            "mimeType": "text/plain",
            "text": "[09:00:01] checkout ok\n[09:06:12] done\n",
            "_meta": {"ci/lines": 2},
        },
        "annotations": {"priority": 0.1},
        "_meta": {"ci/truncated": False},
    },
    {
        "type": "resource",
        "resource": {
            "uri": "https://ci.example.com/builds/1832/dist.tar",
            "mimeType": "application/x-tar",
            "blob": TAR_B64,
        },
    },
]
_BLOCK_TYPES_2025_11 = [
    v25c.TextContent,
    v25c.ImageContent,
    v25c.AudioContent,
    v25c.ResourceLink,
    v25c.EmbeddedResource,
    v25c.EmbeddedResource,
]
TOOL_USE: dict[str, Any] = {
    "type": "tool_use",
    "id": "toolu_01",
    "name": "rerun_job",
    "input": {"job": "integration", "attempt": 2},
    "_meta": {"ci/cache": "hit"},
}
TOOL_RESULT: dict[str, Any] = {
    "type": "tool_result",
    "toolUseId": "toolu_01",
    "content": [{"type": "text", "text": "integration passed on attempt 2"}, _BLOCKS_2025_11[3]],
    "structuredContent": {"job": "integration", "passed": True, "durationS": 141.5},
    "isError": False,
    "_meta": {"ci/attempt": 2},
}
META_2025_11: dict[str, Any] = {
    "progressToken": "tok-1",
    "io.modelcontextprotocol/related-task": {"taskId": "task-7f3a"},
}

REQUESTS_2025_11 = [
    _req(
        V,
        "client",
        0,
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {
                "roots": {"listChanged": True},
                "sampling": {"context": {}, "tools": {}},
                "elicitation": {"form": {}, "url": {}},
                "tasks": {
                    "list": {},
                    "cancel": {},
                    "requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}},
                },
                "experimental": {"com.example.ci/annotations": {}},
            },
            "clientInfo": {
                "name": "ci-companion",
                "title": "CI Companion",
                "version": "4.0.1",
                "description": "Desktop assistant for build pipelines",
                "websiteUrl": "https://companion.example.org",
                "icons": ICONS,
            },
            "_meta": {"com.example/session": "s-19"},
        },
        v25c.InitializeRequestParams,
        [
            ("client_info.icons.0", v25c.Icon),
            ("client_info.icons.1.sizes", ["48x48", "96x96"]),
            ("client_info.icons.0.theme", "light"),
            ("client_info.website_url", "https://companion.example.org"),
            ("capabilities.elicitation.url", {}),
            ("capabilities.sampling.tools", {}),
            ("capabilities.tasks.requests.sampling.create_message", {}),
        ],
    ),
    _req(
        V,
        "client",
        1,
        "ping",
        {"_meta": {"progressToken": 99}},
        v25c.RequestParams,
        [("meta.progressToken", 99)],
        "from-client",
    ),
    _req(V, "server", "srv-ping", "ping", None, v25c.RequestParams, [("meta", UNSET)], "from-server"),
    _req(
        V,
        "client",
        2,
        "resources/list",
        {"cursor": "YnVpbGRzOjUw", "_meta": {"progressToken": 2}},
        v25c.PaginatedRequestParams,
        [("cursor", "YnVpbGRzOjUw")],
    ),
    _req(V, "client", 3, "resources/templates/list", {}, v25c.PaginatedRequestParams, [("cursor", UNSET)]),
    _req(
        V,
        "client",
        4,
        "resources/read",
        {"uri": "https://ci.example.com/builds/1832/log.txt", "_meta": {"progressToken": "read-4"}},
        v25c.ReadResourceRequestParams,
        [("meta.progressToken", "read-4")],
    ),
    _req(
        V,
        "client",
        5,
        "resources/subscribe",
        {"uri": "https://ci.example.com/pipelines/main", "_meta": {}},
        v25c.SubscribeRequestParams,
        [("meta", {})],
    ),
    _req(
        V,
        "client",
        6,
        "resources/unsubscribe",
        {"uri": "https://ci.example.com/pipelines/main"},
        v25c.UnsubscribeRequestParams,
        [("uri", "https://ci.example.com/pipelines/main")],
    ),
    _req(V, "client", 7, "prompts/list", None, v25c.PaginatedRequestParams, [("cursor", UNSET)]),
    _req(
        V,
        "client",
        8,
        "prompts/get",
        {"name": "triage_failure", "arguments": {"build": "1831"}, "_meta": {"progressToken": 8}},
        v25c.GetPromptRequestParams,
        [("arguments.build", "1831"), ("meta.progressToken", 8)],
    ),
    _req(
        V,
        "client",
        9,
        "tools/list",
        {"cursor": "dG9vbHM6OA=="},
        v25c.PaginatedRequestParams,
        [("cursor", "dG9vbHM6OA==")],
    ),
    _req(
        V,
        "client",
        10,
        "tools/call",
        {
            "name": "run_pipeline",
            "arguments": {"pipeline": "main", "ref": "refs/heads/main", "env": {"CI_DEBUG": "1"}},
            "task": {"ttl": 3600000},
            "_meta": {"progressToken": "run-10"},
        },
        v25c.CallToolRequestParams,
        [
            ("task", v25c.TaskMetadata),
            ("task.ttl", 3600000),
            ("meta.progressToken", "run-10"),
            ("arguments.env.CI_DEBUG", "1"),
        ],
        "task-augmented",
    ),
    _req(
        V,
        "client",
        11,
        "tools/call",
        {"name": "rerun_job", "arguments": {"job": "integration", "attempt": 2}},
        v25c.CallToolRequestParams,
        [("task", UNSET), ("meta", UNSET)],
    ),
    _req(
        V,
        "client",
        12,
        "logging/setLevel",
        {"level": "notice", "_meta": {}},
        v25c.SetLevelRequestParams,
        [("level", "notice")],
    ),
    _req(
        V,
        "client",
        13,
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "triage_failure", "title": "Triage a failure"},
            "argument": {"name": "build", "value": "18"},
            "context": {"arguments": {"pipeline": "main"}},
            "_meta": {"progressToken": 13},
        },
        v25c.CompleteRequestParams,
        [("ref", v25c.PromptReference), ("context.arguments.pipeline", "main")],
    ),
    _req(
        V,
        "server",
        "sample-tools",
        "sampling/createMessage",
        {
            "messages": [
                {
                    "role": "user",
                    "content": {"type": "text", "text": "Integration failed on attempt 1. Investigate."},
                },
                {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "Re-running the job."}, TOOL_USE],
                    "_meta": {"ci/turn": 2},
                },
                {"role": "user", "content": [TOOL_RESULT]},
                {"role": "user", "content": {"type": "audio", "data": OGG_B64, "mimeType": "audio/ogg"}},
            ],
            "tools": [
                {
                    "name": "rerun_job",
                    "title": "Re-run a job",
                    "description": "Re-run one job of the current pipeline",
                    "inputSchema": {
                        "type": "object",
                        "properties": {"job": {"type": "string"}, "attempt": {"type": "integer"}},
                        "required": ["job"],
                    },
                    "outputSchema": {"type": "object", "properties": {"passed": {"type": "boolean"}}},
                    "annotations": {"idempotentHint": False, "openWorldHint": False},
                    "execution": {"taskSupport": "optional"},
                    "icons": [ICONS[0]],
                }
            ],
            "toolChoice": {"mode": "auto"},
            "systemPrompt": "You are a CI triage assistant.",
            "includeContext": "none",
            "temperature": 0.3,
            "maxTokens": 1024,
            "stopSequences": ["</done>"],
            "metadata": {"provider": {"cacheControl": "ephemeral"}},
            "modelPreferences": {"hints": [{"name": "claude"}], "intelligencePriority": 0.9},
            "task": {"ttl": 600000},
            "_meta": {"progressToken": "sample-tools"},
        },
        v25c.CreateMessageRequestParams,
        [
            ("messages.0.content", v25c.TextContent),
            ("messages.1.content.1", v25c.ToolUseContent),
            ("messages.1.content.1.input.attempt", 2),
            ("messages.2.content.0", v25c.ToolResultContent),
            ("messages.2.content.0.content.1", v25c.ResourceLink),
            ("messages.2.content.0.structured_content.durationS", 141.5),
            ("messages.3.content", v25c.AudioContent),
            ("tools.0", v25c.Tool),
            ("tools.0.execution.task_support", "optional"),
            ("tool_choice.mode", "auto"),
            ("task.ttl", 600000),
        ],
    ),
    _req(
        V,
        "server",
        "roots-2",
        "roots/list",
        {"_meta": {"progressToken": "roots-2"}},
        v25c.RequestParams,
        [("meta.progressToken", "roots-2")],
    ),
    _req(
        V,
        "server",
        "elicit-form",
        "elicitation/create",
        {
            "mode": "form",
            "message": "Configure the release build",
            "requestedSchema": {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": {
                    "channel": {
                        "type": "string",
                        "title": "Channel",
                        "description": "Release channel",
                        "enum": ["stable", "beta", "nightly"],
                        "default": "beta",
                    },
                    "region": {
                        "type": "string",
                        "title": "Region",
                        "oneOf": [
                            {"const": "eu-west-1", "title": "Europe (Ireland)"},
                            {"const": "us-east-2", "title": "US East (Ohio)"},
                        ],
                        "default": "eu-west-1",
                    },
                    "platforms": {
                        "type": "array",
                        "title": "Platforms",
                        "minItems": 1,
                        "maxItems": 3,
                        "items": {"type": "string", "enum": ["linux", "macos", "windows"]},
                        "default": ["linux"],
                    },
                    "notify": {
                        "type": "array",
                        "title": "Notify",
                        "items": {
                            "anyOf": [
                                {"const": "qa", "title": "QA team"},
                                {"const": "docs", "title": "Docs team"},
                            ]
                        },
                    },
                    "tier": {
                        "type": "string",
                        "enum": ["s", "m", "l"],
                        "enumNames": ["Small", "Medium", "Large"],
                    },
                    "releaseDate": {"type": "string", "format": "date", "default": "2025-12-01"},
                    "parallelism": {"type": "integer", "minimum": 1, "maximum": 16, "default": 4},
                    "dryRun": {
                        "type": "boolean",
                        "default": False,
                        "description": "Build without publishing",
                    },
                },
                "required": ["channel", "platforms"],
            },
            "task": {"ttl": 120000},
            "_meta": {"progressToken": "elicit-form"},
        },
        v25c.ElicitRequestFormParams,
        [
            ("mode", "form"),
            ("requested_schema.schema", "https://json-schema.org/draft/2020-12/schema"),
            ("requested_schema.properties.channel", v25c.UntitledSingleSelectEnumSchema),
            ("requested_schema.properties.channel.default", "beta"),
            ("requested_schema.properties.region", v25c.TitledSingleSelectEnumSchema),
            ("requested_schema.properties.region.one_of.1.title", "US East (Ohio)"),
            ("requested_schema.properties.platforms", v25c.UntitledMultiSelectEnumSchema),
            ("requested_schema.properties.platforms.max_items", 3),
            ("requested_schema.properties.notify", v25c.TitledMultiSelectEnumSchema),
            ("requested_schema.properties.notify.items.any_of.0.const", "qa"),
            ("requested_schema.properties.tier", v25c.LegacyTitledEnumSchema),
            ("requested_schema.properties.releaseDate", v25c.StringSchema),
            ("requested_schema.properties.parallelism", v25c.NumberSchema),
            ("requested_schema.properties.dryRun", v25c.BooleanSchema),
        ],
        "form",
    ),
    _req(
        V,
        "server",
        "elicit-url",
        "elicitation/create",
        {
            "mode": "url",
            "message": "Authorise the CI app to publish to the package registry.",
            "url": "https://registry.example.com/oauth/authorize?client_id=ci&state=9c1e",
            "elicitationId": "elic-5512",
            "_meta": {"progressToken": "elicit-url"},
        },
        v25c.ElicitRequestURLParams,
        [
            ("mode", "url"),
            ("elicitation_id", "elic-5512"),
            ("url", "https://registry.example.com/oauth/authorize?client_id=ci&state=9c1e"),
        ],
        "url",
    ),
    _req(
        V,
        "client",
        20,
        "tasks/get",
        {"taskId": "task-7f3a", "_meta": {"com.example/poll": 3}},
        v25c.GetTaskRequestParams,
        [("task_id", "task-7f3a")],
    ),
    _req(
        V,
        "server",
        "t-21",
        "tasks/get",
        {"taskId": "task-c1"},
        v25c.GetTaskRequestParams,
        [("task_id", "task-c1")],
        "from-server",
    ),
    _req(
        V,
        "client",
        22,
        "tasks/list",
        {"cursor": "dGFza3M6MjA=", "_meta": {}},
        v25c.PaginatedRequestParams,
        [("cursor", "dGFza3M6MjA=")],
    ),
    _req(
        V,
        "server",
        "t-23",
        "tasks/list",
        None,
        v25c.PaginatedRequestParams,
        [("cursor", UNSET)],
        "from-server",
    ),
    _req(
        V,
        "client",
        24,
        "tasks/cancel",
        {"taskId": "task-7f3a", "_meta": {"com.example/reason": "superseded"}},
        v25c.CancelTaskRequestParams,
        [("task_id", "task-7f3a")],
    ),
    _req(
        V,
        "server",
        "t-25",
        "tasks/cancel",
        {"taskId": "task-c2"},
        v25c.CancelTaskRequestParams,
        [("task_id", "task-c2")],
        "from-server",
    ),
    _req(
        V,
        "client",
        26,
        "tasks/result",
        {"taskId": "task-66c0", "_meta": {"progressToken": "payload-26"}},
        v25c.GetTaskPayloadRequestParams,
        [("task_id", "task-66c0"), ("meta.progressToken", "payload-26")],
    ),
    _req(
        V,
        "server",
        "t-27",
        "tasks/result",
        {"taskId": "task-c3"},
        v25c.GetTaskPayloadRequestParams,
        [("task_id", "task-c3")],
        "from-server",
    ),
]

RESULTS_2025_11 = [
    _res(
        V,
        "initialize",
        0,
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {
                "logging": {},
                "completions": {},
                "prompts": {"listChanged": True},
                "resources": {"subscribe": True, "listChanged": True},
                "tools": {"listChanged": True},
                "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
            },
            "serverInfo": {
                "name": "ci-mcp",
                "title": "Example CI",
                "version": "2025.11.3",
                "description": "Pipelines, builds and artefacts",
                "websiteUrl": "https://ci.example.com",
                "icons": ICONS,
            },
            "instructions": "Long builds run as tasks; poll tasks/get or wait for notifications/tasks/status.",
            "_meta": {"com.example/node": "ci-2"},
        },
        v25c.InitializeResult,
        [
            ("server_info.icons.1", v25c.Icon),
            ("server_info.icons.1.theme", "dark"),
            ("capabilities.tasks.requests.tools.call", {}),
            ("capabilities.tasks.list_", {}),
        ],
    ),
    _res(V, "ping", 1, {}, v25c.Result),
    _res(
        V,
        "resources/list",
        2,
        {
            "resources": [
                {
                    "uri": "https://ci.example.com/pipelines/main",
                    "name": "pipeline-main",
                    "title": "Main pipeline",
                    "description": "Status of the main branch pipeline",
                    "mimeType": "application/json",
                    "size": 2048,
                    "icons": ICONS,
                    "annotations": {
                        "audience": ["user", "assistant"],
                        "priority": 0.7,
                        "lastModified": "2025-11-25T09:06:12Z",
                    },
                    "_meta": {"ci/visibility": "internal"},
                }
            ],
            "nextCursor": "YnVpbGRzOjEwMA==",
            "_meta": {"ci/total": 118},
        },
        v25c.ListResourcesResult,
        [
            ("resources.0", v25c.Resource),
            ("resources.0.icons.0.src", "https://ci.example.com/static/icon-light.svg"),
            ("resources.0.annotations.last_modified", "2025-11-25T09:06:12Z"),
        ],
    ),
    _res(
        V,
        "resources/templates/list",
        3,
        {
            "resourceTemplates": [
                {
                    "uriTemplate": "https://ci.example.com/builds/{number}/log.txt",
                    "name": "build-log",
                    "title": "Build log",
                    "description": "Raw log of one build",
                    "mimeType": "text/plain",
                    "icons": [ICONS[1]],
                    "annotations": {"audience": ["assistant"]},
                    "_meta": {"ci/maxBytes": 10485760},
                }
            ]
        },
        v25c.ListResourceTemplatesResult,
        [("resource_templates.0.icons.0.sizes", ["48x48", "96x96"])],
    ),
    _res(
        V,
        "resources/read",
        4,
        {
            "contents": [_BLOCKS_2025_11[4]["resource"], _BLOCKS_2025_11[5]["resource"]],
            "_meta": {"ci/cached": True},
        },
        v25c.ReadResourceResult,
        [
            ("contents.0", v25c.TextResourceContents),
            ("contents.0.meta", {"ci/lines": 2}),
            ("contents.1", v25c.BlobResourceContents),
        ],
    ),
    _res(
        V,
        "resources/subscribe",
        5,
        {"_meta": {"ci/subscription": "sub-4"}},
        v25c.Result,
        [(("meta", "ci/subscription"), "sub-4")],
    ),
    _res(V, "resources/unsubscribe", 6, {}, v25c.Result),
    _res(
        V,
        "prompts/list",
        7,
        {
            "prompts": [
                {
                    "name": "triage_failure",
                    "title": "Triage a failure",
                    "description": "Find the likely cause of a failed build",
                    "icons": [ICONS[0]],
                    "arguments": [
                        {
                            "name": "build",
                            "title": "Build number",
                            "description": "e.g. 1831",
                            "required": True,
                        }
                    ],
                    "_meta": {"ci/category": "triage"},
                }
            ],
            "nextCursor": "cHJvbXB0czox",
        },
        v25c.ListPromptsResult,
        [("prompts.0.icons.0", v25c.Icon), ("prompts.0.arguments.0.title", "Build number")],
    ),
    _res(
        V,
        "prompts/get",
        8,
        {
            "description": "Triage of build 1831",
            "messages": [
                {"role": "user" if i % 3 else "assistant", "content": block}
                for i, block in enumerate(_BLOCKS_2025_11)
            ],
            "_meta": {"ci/promptRev": 7},
        },
        v25c.GetPromptResult,
        [(f"messages.{i}.content", cls) for i, cls in enumerate(_BLOCK_TYPES_2025_11)]
        + [("messages.3.content.icons.0.theme", "light")],
    ),
    _res(
        V,
        "tools/list",
        9,
        {
            "tools": [
                {
                    "name": "run_pipeline",
                    "title": "Run pipeline",
                    "description": "Start a pipeline run; long runs should be task-augmented",
                    "inputSchema": {
                        "type": "object",
                        "properties": {"pipeline": {"type": "string"}, "ref": {"type": "string"}},
                        "required": ["pipeline"],
                    },
                    "outputSchema": {
                        "type": "object",
                        "properties": {"build": {"type": "integer"}, "status": {"type": "string"}},
                    },
                    "annotations": {
                        "title": "Run",
                        "readOnlyHint": False,
                        "destructiveHint": False,
                        "idempotentHint": False,
                        "openWorldHint": True,
                    },
                    "execution": {"taskSupport": "required"},
                    "icons": ICONS,
                    "_meta": {"ci/costUnits": 5},
                },
                {
                    "name": "cancel_build",
                    "inputSchema": {"type": "object"},
                    "execution": {"taskSupport": "forbidden"},
                },
            ],
            "nextCursor": "dG9vbHM6MTY=",
        },
        v25c.ListToolsResult,
        [
            ("tools.0.execution", v25c.ToolExecution),
            ("tools.0.execution.task_support", "required"),
            ("tools.0.icons.1.mime_type", "image/png"),
            ("tools.1.icons", UNSET),
        ],
    ),
    _res(
        V,
        "tools/call",
        11,
        {
            "content": _BLOCKS_2025_11,
            "structuredContent": {"build": 1832, "status": "passed", "flaky": []},
            "isError": False,
            "_meta": {"ci/elapsedMs": 372000},
        },
        v25c.CallToolResult,
        [(f"content.{i}", cls) for i, cls in enumerate(_BLOCK_TYPES_2025_11)]
        + [("structured_content.build", 1832), ("content.3.icons.0", v25c.Icon)],
    ),
    _res(
        V,
        "tools/call",
        10,
        {
            "task": TASK_WORKING,
            "_meta": {"io.modelcontextprotocol/model-immediate-response": "Pipeline started."},
        },
        v25c.CreateTaskResult,
        [("task", v25c.Task), ("task.status", "working")],
        "task-augmented",
    ),
    _res(V, "logging/setLevel", 12, {}, v25c.Result),
    _res(
        V,
        "sampling/createMessage",
        "sample-task",
        {"task": {**TASK_WORKING, "taskId": "task-s-4", "statusMessage": "Waiting for the user to approve"}},
        v25c.CreateTaskResult,
        [("task.task_id", "task-s-4"), ("meta", UNSET)],
        "task-augmented",
    ),
    _res(
        V,
        "elicitation/create",
        "elicit-task",
        {
            "task": {**TASK_DONE, "taskId": "task-e-2", "status": "input_required"},
            "_meta": {"ui/queued": True},
        },
        v25c.CreateTaskResult,
        [("task.status", "input_required"), ("task.ttl", None)],
        "task-augmented",
    ),
    _res(
        V,
        "completion/complete",
        13,
        {"completion": {"values": ["1831", "1832"], "hasMore": False}},
        v25c.CompleteResult,
        [("completion.total", UNSET)],
    ),
    _res(
        V,
        "sampling/createMessage",
        "sample-tools",
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "I will re-run integration."}, TOOL_USE],
            "model": "claude-sonnet-4-5",
            "stopReason": "toolUse",
            "_meta": {"usage": {"input": 812, "output": 44}},
        },
        v25c.CreateMessageResult,
        [
            ("content.0", v25c.TextContent),
            ("content.1", v25c.ToolUseContent),
            ("content.1.name", "rerun_job"),
            ("stop_reason", "toolUse"),
        ],
        "array-with-tool-use",
    ),
    _res(
        V,
        "sampling/createMessage",
        "sample-2",
        {"role": "user", "content": TOOL_RESULT, "model": "claude-sonnet-4-5"},
        v25c.CreateMessageResult,
        [
            ("content", v25c.ToolResultContent),
            ("content.is_error", False),
            ("content.content.1", v25c.ResourceLink),
        ],
        "tool-result",
    ),
    _res(
        V,
        "sampling/createMessage",
        "sample-3",
        {
            "role": "assistant",
            "content": {"type": "image", "data": PNG_B64, "mimeType": "image/png"},
            "model": "diagrammer",
            "stopReason": "endTurn",
        },
        v25c.CreateMessageResult,
        [("content", v25c.ImageContent)],
        "image",
    ),
    _res(
        V,
        "roots/list",
        "roots-2",
        {"roots": [{"uri": "file:///builds/ws", "name": "workspace", "_meta": {"ci/agent": "a-3"}}]},
        v25c.ListRootsResult,
        [("roots.0.meta", {"ci/agent": "a-3"})],
    ),
    _res(
        V,
        "elicitation/create",
        "elicit-form",
        {
            "action": "accept",
            "content": {
                "channel": "stable",
                "region": "us-east-2",
                "platforms": ["linux", "macos"],
                "notify": ["qa"],
                "parallelism": 8,
                "dryRun": True,
            },
            "_meta": {"ui/ms": 8100},
        },
        v25c.ElicitResult,
        [("content.platforms", ["linux", "macos"]), ("content.parallelism", 8), ("content.dryRun", True)],
        "form-accept",
    ),
    _res(
        V,
        "elicitation/create",
        "elicit-url",
        {"action": "accept"},
        v25c.ElicitResult,
        [("content", UNSET)],
        "url-accept",
    ),
    _res(
        V,
        "tasks/get",
        20,
        {**TASK_WORKING, "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "task-7f3a"}}},
        v25c.GetTaskResult,
        [("status", "working")],
    ),
    _res(
        V,
        "tasks/list",
        22,
        {"tasks": [TASK_WORKING, TASK_DONE], "nextCursor": "dGFza3M6NDA=", "_meta": {}},
        v25c.ListTasksResult,
        [("tasks.0", v25c.Task), ("tasks.0.poll_interval", 5000), ("tasks.1.ttl", None)],
    ),
    _res(
        V,
        "tasks/cancel",
        24,
        {**TASK_WORKING, "status": "cancelled", "statusMessage": "Cancelled by ana"},
        v25c.CancelTaskResult,
        [("status", "cancelled")],
    ),
    _res(
        V,
        "tasks/result",
        26,
        {
            "content": [{"type": "text", "text": "Build #1830 passed."}],
            "structuredContent": {"build": 1830, "status": "passed"},
            "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "task-66c0"}},
        },
        dict,
        [("structuredContent.build", 1830)],
    ),
]

NOTIFICATIONS_2025_11 = [
    _note(
        V,
        "client",
        "notifications/cancelled",
        {"requestId": 11, "reason": "Superseded", "_meta": {"ci/by": "ana"}},
        v25c.CancelledNotificationParams,
        [("request_id", 11), ("meta", {"ci/by": "ana"})],
        "from-client",
    ),
    _note(
        V,
        "server",
        "notifications/cancelled",
        {"reason": "Server shutting down"},
        v25c.CancelledNotificationParams,
        [("request_id", UNSET)],
        "from-server-no-request-id",
    ),
    _note(
        V,
        "client",
        "notifications/initialized",
        {"_meta": {"ci/client": "ready"}},
        v25c.NotificationParams,
        [("meta", {"ci/client": "ready"})],
    ),
    _note(
        V,
        "server",
        "notifications/message",
        {"level": "critical", "logger": "runner.a-3", "data": ["disk", 98.5, None], "_meta": {"ci/seq": 55}},
        v25c.LoggingMessageNotificationParams,
        [("data.1", 98.5)],
    ),
    _note(
        V,
        "server",
        "notifications/progress",
        {"progressToken": "run-10", "progress": 212, "total": 480, "message": "Tests", "_meta": {}},
        v25c.ProgressNotificationParams,
        [("total", 480.0)],
        "from-server",
    ),
    _note(
        V,
        "client",
        "notifications/progress",
        {"progressToken": "roots-2", "progress": 1, "total": 1},
        v25c.ProgressNotificationParams,
        [("progress", 1.0)],
        "from-client",
    ),
    _note(
        V, "server", "notifications/prompts/list_changed", None, v25c.NotificationParams, [("meta", UNSET)]
    ),
    _note(
        V,
        "server",
        "notifications/resources/list_changed",
        {"_meta": {"ci/added": 1}},
        v25c.NotificationParams,
    ),
    _note(
        V,
        "server",
        "notifications/resources/updated",
        {"uri": "https://ci.example.com/pipelines/main", "_meta": {"ci/rev": 3}},
        v25c.ResourceUpdatedNotificationParams,
        [("meta", {"ci/rev": 3})],
    ),
    _note(V, "client", "notifications/roots/list_changed", {}, v25c.NotificationParams),
    _note(V, "server", "notifications/tools/list_changed", None, v25c.NotificationParams),
    _note(
        V,
        "server",
        "notifications/elicitation/complete",
        {"elicitationId": "elic-5512", "_meta": {"com.example/completedAt": "2025-11-25T09:10:00Z"}},
        v25c.ElicitationCompleteNotificationParams,
        [("elicitation_id", "elic-5512")],
    ),
    _note(
        V,
        "server",
        "notifications/tasks/status",
        {
            **TASK_WORKING,
            "status": "input_required",
            "statusMessage": "Waiting for release approval",
            "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "task-7f3a"}},
        },
        v25c.TaskStatusNotificationParams,
        [("status", "input_required"), ("ttl", 3600000), ("poll_interval", 5000)],
        "from-server",
    ),
    _note(
        V,
        "client",
        "notifications/tasks/status",
        {**TASK_DONE, "status": "failed", "statusMessage": "Sampling provider unavailable"},
        v25c.TaskStatusNotificationParams,
        [("status", "failed"), ("ttl", None)],
        "from-client",
    ),
]

ERRORS_2025_11 = [
    _err(
        V,
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
        "parse-error/id-null",
    ),
    _err(
        V,
        {
            "jsonrpc": "2.0",
            "id": 10,
            "error": {
                "code": -32042,
                "message": "This request requires authorisation with the package registry.",
                "data": {
                    "elicitations": [
                        {
                            "mode": "url",
                            "message": "Sign in to the registry",
                            "url": "https://registry.example.com/login?state=77",
                            "elicitationId": "elic-77",
                        }
                    ]
                },
            },
        },
        "url-elicitation-required",
    ),
    _err(
        V,
        {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid request"}},
        "no-id",
    ),
]


# == 2026-07-28 (a travel booking server) =============================================================

V = "2026-07-28"

CLIENT_INFO_2026: dict[str, Any] = {
    "name": "travel-desk",
    "title": "Travel Desk",
    "version": "7.2.0",
    "description": "Corporate travel assistant",
    "websiteUrl": "https://travel-desk.example.net",
    "icons": [
        {"src": "https://travel-desk.example.net/icon.svg", "mimeType": "image/svg+xml", "sizes": ["any"]}
    ],
}
META_2026: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {
        "elicitation": {"form": {}, "url": {}},
        "sampling": {"tools": {}},
        "roots": {},
        "extensions": {"io.modelcontextprotocol/tasks": {}},
    },
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO_2026,
    "io.modelcontextprotocol/logLevel": "info",
}
# The smallest request _meta 2026-07-28 allows: a client without optional capabilities.
META_2026_MIN: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
SERVER_META_2026: dict[str, Any] = {
    "io.modelcontextprotocol/serverInfo": {"name": "fly-mcp", "title": "Fly", "version": "3.0.0"}
}
_BLOCKS_2026: list[dict[str, Any]] = [
    {
        "type": "text",
        "text": "LH 2401 MUC→LHR departs 07:05, gate K12.",
        "annotations": {"audience": ["user"], "priority": 1, "lastModified": "2026-08-02T05:40:00Z"},
        "_meta": {"fly/pnr": "Q7XK2L"},
    },
    {"type": "image", "data": JPEG_B64, "mimeType": "image/jpeg", "_meta": {"fly/seatMap": True}},
    {"type": "audio", "data": OGG_B64, "mimeType": "audio/ogg", "annotations": {"audience": ["user"]}},
    {
        "type": "resource_link",
        "uri": "https://fly.example.com/bookings/Q7XK2L/boarding-pass.pdf",
        "name": "boarding-pass",
        "title": "Boarding pass",
        "mimeType": "application/pdf",
        "size": 48213,
        "icons": [
            {
                "src": "https://fly.example.com/static/pdf.png",
                "mimeType": "image/png",
                "sizes": ["32x32"],
                "theme": "light",
            }
        ],
        "annotations": {"priority": 0.8},
        "_meta": {"fly/expires": "2026-08-02T07:05:00Z"},
    },
    {
        "type": "resource",
        "resource": {
            "uri": "https://fly.example.com/bookings/Q7XK2L/itinerary.txt",
            "mimeType": "text/plain",
            "text": "MUC 07:05 → LHR 08:00 (LH 2401)\n",
            "_meta": {"fly/rev": 4},
        },
        "annotations": {"audience": ["assistant"]},
    },
    {
        "type": "resource",
        "resource": {
            "uri": "https://fly.example.com/bookings/Q7XK2L/receipt.pdf",
            "mimeType": "application/pdf",
            "blob": TAR_B64,
        },
        "_meta": {"fly/vat": "19%"},
    },
]
_BLOCK_TYPES_2026 = [
    v26.TextContent,
    v26.ImageContent,
    v26.AudioContent,
    v26.ResourceLink,
    v26.EmbeddedResource,
    v26.EmbeddedResource,
]
# Input requests and their responses: in 2026-07-28 only ListRootsRequest.params, CreateMessageResult
# and Root declare `_meta` among them, so only those carry one here.
INPUT_REQUESTS_2026: dict[str, Any] = {
    "seat_preference": {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "Which seat would you like on LH 2401?",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "seat": {
                        "type": "string",
                        "title": "Seat",
                        "oneOf": [
                            {"const": "aisle", "title": "Aisle"},
                            {"const": "window", "title": "Window"},
                        ],
                    },
                    "meals": {
                        "type": "array",
                        "items": {"type": "string", "enum": ["vegetarian", "vegan", "kosher"]},
                        "maxItems": 1,
                    },
                    "bags": {"type": "integer", "minimum": 0, "maximum": 3, "default": 1},
                    "loungeAccess": {"type": "boolean", "title": "Lounge", "default": False},
                },
                "required": ["seat"],
            },
        },
    },
    "payment_consent": {
        "method": "elicitation/create",
        "params": {
            "mode": "url",
            "message": "Confirm the card payment of EUR 412.80",
            "url": "https://pay.example.com/confirm/8d21",
        },
    },
    "summarise_policy": {
        "method": "sampling/createMessage",
        "params": {
            "messages": [
                {
                    "role": "user",
                    "content": {"type": "text", "text": "Is a 07:05 flight within the travel policy?"},
                },
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "tu_9",
                            "name": "lookup_policy",
                            "input": {"topic": "early flights"},
                        }
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "toolUseId": "tu_9",
                            "content": [{"type": "text", "text": "Flights before 07:00 need approval."}],
                            "structuredContent": ["approval", 7],
                        }
                    ],
                },
            ],
            "tools": [
                {
                    "name": "lookup_policy",
                    "inputSchema": {"type": "object", "properties": {"topic": {"type": "string"}}},
                }
            ],
            "toolChoice": {"mode": "required"},
            "systemPrompt": "Answer yes or no with one reason.",
            "maxTokens": 60,
            "temperature": 0.1,
            "metadata": {"fly/trace": "t-81"},
        },
    },
    "workspace_roots": {"method": "roots/list"},
    "trip_folders": {"method": "roots/list", "params": {"_meta": {"fly/only": "trips"}}},
}
INPUT_RESPONSES_2026: dict[str, Any] = {
    "seat_preference": {
        "action": "accept",
        "content": {"seat": "aisle", "meals": ["vegan"], "bags": 2, "loungeAccess": True},
    },
    "payment_consent": {"action": "accept"},
    "summarise_policy": {
        "role": "assistant",
        "content": {"type": "text", "text": "Yes: it departs after 07:00."},
        "model": "claude-haiku",
        "stopReason": "endTurn",
        "_meta": {"fly/tokens": 12},
    },
    "workspace_roots": {
        "roots": [{"uri": "file:///Users/kim/Trips", "name": "Trips", "_meta": {"fly/synced": True}}],
    },
    "trip_folders": {"roots": []},
}

REQUESTS_2026 = [
    _req(
        V,
        "client",
        "discover-1",
        "server/discover",
        {"_meta": META_2026},
        v26.RequestParams,
        [
            (("meta", "io.modelcontextprotocol/protocolVersion"), "2026-07-28"),
            (("meta", "io.modelcontextprotocol/clientCapabilities", "elicitation", "url"), {}),
            (("meta", "io.modelcontextprotocol/clientInfo", "title"), "Travel Desk"),
        ],
    ),
    _req(
        V,
        "client",
        2,
        "resources/list",
        {"_meta": META_2026_MIN, "cursor": "cmVzOjI1"},
        v26.PaginatedRequestParams,
        [("cursor", "cmVzOjI1"), (("meta", "io.modelcontextprotocol/clientCapabilities"), {})],
    ),
    _req(
        V,
        "client",
        3,
        "resources/templates/list",
        {"_meta": META_2026_MIN},
        v26.PaginatedRequestParams,
        [("cursor", UNSET)],
    ),
    _req(
        V,
        "client",
        4,
        "resources/read",
        {"_meta": META_2026, "uri": "https://fly.example.com/bookings/Q7XK2L/itinerary.txt"},
        v26.ReadResourceRequestParams,
        [("uri", "https://fly.example.com/bookings/Q7XK2L/itinerary.txt"), ("input_responses", UNSET)],
    ),
    _req(
        V,
        "client",
        5,
        "resources/read",
        {
            "_meta": META_2026,
            "uri": "https://fly.example.com/bookings/Q7XK2L/receipt.pdf",
            "inputResponses": {"workspace_roots": INPUT_RESPONSES_2026["workspace_roots"]},
            "requestState": "cmVhZDpyZWNlaXB0",
        },
        v26.ReadResourceRequestParams,
        [("input_responses.workspace_roots", v26.ListRootsResult), ("request_state", "cmVhZDpyZWNlaXB0")],
        "retry-with-input",
    ),
    _req(
        V,
        "client",
        6,
        "prompts/list",
        {"_meta": {**META_2026_MIN, "progressToken": 6}, "cursor": "cHI6MQ=="},
        v26.PaginatedRequestParams,
        [("meta.progressToken", 6)],
    ),
    _req(
        V,
        "client",
        7,
        "prompts/get",
        {"_meta": META_2026, "name": "trip_brief", "arguments": {"pnr": "Q7XK2L", "language": "de"}},
        v26.GetPromptRequestParams,
        [("arguments.language", "de")],
    ),
    _req(
        V,
        "client",
        8,
        "prompts/get",
        {
            "_meta": META_2026,
            "name": "trip_brief",
            "arguments": {"pnr": "Q7XK2L"},
            "requestState": "cHJvbXB0OnN0ZXAy",
        },
        v26.GetPromptRequestParams,
        [("request_state", "cHJvbXB0OnN0ZXAy"), ("input_responses", UNSET)],
        "retry-with-state",
    ),
    _req(
        V,
        "client",
        9,
        "tools/list",
        {"_meta": META_2026_MIN},
        v26.PaginatedRequestParams,
        [("meta", META_2026_MIN)],
    ),
    _req(
        V,
        "client",
        10,
        "tools/call",
        {
            "_meta": {**META_2026, "progressToken": "book-10"},
            "name": "book_flight",
            "arguments": {
                "flight": "LH2401",
                "date": "2026-08-02",
                "passengers": [{"name": "Kim Park"}],
                "flex": None,
            },
        },
        v26.CallToolRequestParams,
        [
            ("name", "book_flight"),
            ("arguments.passengers.0.name", "Kim Park"),
            ("meta.progressToken", "book-10"),
            (("meta", "io.modelcontextprotocol/logLevel"), "info"),
        ],
    ),
    _req(
        V,
        "client",
        11,
        "tools/call",
        {
            "_meta": META_2026,
            "name": "book_flight",
            "arguments": {"flight": "LH2401", "date": "2026-08-02", "passengers": [{"name": "Kim Park"}]},
            "inputResponses": INPUT_RESPONSES_2026,
            "requestState": "Ym9vazpzdGVwMjpwbnI9UTdYSzJM",
        },
        v26.CallToolRequestParams,
        [
            ("input_responses.seat_preference", v26.ElicitResult),
            ("input_responses.seat_preference.content.meals", ["vegan"]),
            ("input_responses.payment_consent", v26.ElicitResult),
            ("input_responses.payment_consent.content", UNSET),
            ("input_responses.workspace_roots.roots.0.meta", {"fly/synced": True}),
            ("input_responses.summarise_policy", v26.CreateMessageResult),
            ("input_responses.summarise_policy.content", v26.TextContent),
            ("input_responses.workspace_roots", v26.ListRootsResult),
            ("input_responses.trip_folders.roots", []),
            ("request_state", "Ym9vazpzdGVwMjpwbnI9UTdYSzJM"),
        ],
        "retry-with-input",
    ),
    _req(
        V,
        "client",
        12,
        "completion/complete",
        {
            "_meta": META_2026_MIN,
            "ref": {"type": "ref/resource", "uri": "https://fly.example.com/airports/{iata}"},
            "argument": {"name": "iata", "value": "LH"},
            "context": {"arguments": {"country": "GB"}},
        },
        v26.CompleteRequestParams,
        [("ref", v26.ResourceTemplateReference), ("context.arguments.country", "GB")],
    ),
    _req(
        V,
        "client",
        "listen-1",
        "subscriptions/listen",
        {
            "_meta": META_2026,
            "notifications": {
                "toolsListChanged": True,
                "promptsListChanged": False,
                "resourcesListChanged": True,
                "resourceSubscriptions": [
                    "https://fly.example.com/flights/LH2401/status",
                    "https://fly.example.com/bookings/Q7XK2L",
                ],
            },
        },
        v26.SubscriptionsListenRequestParams,
        [
            ("notifications", v26.SubscriptionFilter),
            ("notifications.prompts_list_changed", False),
            ("notifications.resource_subscriptions.1", "https://fly.example.com/bookings/Q7XK2L"),
        ],
    ),
]

RESULTS_2026 = [
    _res(
        V,
        "server/discover",
        "discover-1",
        {
            "resultType": "complete",
            "supportedVersions": ["2026-07-28", "2025-11-25", "2025-06-18"],
            "capabilities": {
                "logging": {},
                "completions": {},
                "prompts": {"listChanged": True},
                "resources": {"subscribe": True, "listChanged": True},
                "tools": {"listChanged": True},
                "extensions": {"io.modelcontextprotocol/tasks": {"maxTtlMs": 86400000}},
                "experimental": {"fly/fares": {"currency": "EUR"}},
            },
            "instructions": "Book with book_flight; every booking needs a payment consent.",
            "cacheScope": "public",
            "ttlMs": 300000,
            "_meta": SERVER_META_2026,
        },
        v26.DiscoverResult,
        [
            ("supported_versions", ["2026-07-28", "2025-11-25", "2025-06-18"]),
            ("capabilities.extensions", {"io.modelcontextprotocol/tasks": {"maxTtlMs": 86400000}}),
            ("cache_scope", "public"),
            ("ttl_ms", 300000),
            ("result_type", "complete"),
            (("meta", "io.modelcontextprotocol/serverInfo", "name"), "fly-mcp"),
        ],
    ),
    _res(
        V,
        "resources/list",
        2,
        {
            "resultType": "complete",
            "resources": [
                {
                    "uri": "https://fly.example.com/bookings/Q7XK2L",
                    "name": "booking-Q7XK2L",
                    "title": "Booking Q7XK2L",
                    "description": "MUC→LHR, 2 August",
                    "mimeType": "application/json",
                    "size": 1890,
                    "icons": [{"src": "https://fly.example.com/static/plane.svg"}],
                    "annotations": {
                        "audience": ["user"],
                        "priority": 0.9,
                        "lastModified": "2026-07-30T12:00:00Z",
                    },
                    "_meta": {"fly/status": "confirmed"},
                }
            ],
            "nextCursor": "cmVzOjUw",
            "cacheScope": "private",
            "ttlMs": 0,
            "_meta": SERVER_META_2026,
        },
        v26.ListResourcesResult,
        [
            ("resources.0.icons.0.mime_type", UNSET),
            ("cache_scope", "private"),
            ("ttl_ms", 0),
            ("next_cursor", "cmVzOjUw"),
        ],
    ),
    _res(
        V,
        "resources/templates/list",
        3,
        {
            "resultType": "complete",
            "resourceTemplates": [
                {
                    "uriTemplate": "https://fly.example.com/flights/{flight}/status",
                    "name": "flight-status",
                    "title": "Flight status",
                    "mimeType": "application/json",
                    "icons": [{"src": "https://fly.example.com/static/radar.png", "sizes": ["16x16"]}],
                }
            ],
            "cacheScope": "public",
            "ttlMs": 86400000,
        },
        v26.ListResourceTemplatesResult,
        [
            ("resource_templates.0.uri_template", "https://fly.example.com/flights/{flight}/status"),
            ("ttl_ms", 86400000),
        ],
    ),
    _res(
        V,
        "resources/read",
        4,
        {
            "resultType": "complete",
            "contents": [_BLOCKS_2026[4]["resource"], _BLOCKS_2026[5]["resource"]],
            "cacheScope": "private",
            "ttlMs": 60000,
            "_meta": SERVER_META_2026,
        },
        v26.ReadResourceResult,
        [
            ("contents.0", v26.TextResourceContents),
            ("contents.1", v26.BlobResourceContents),
            ("result_type", "complete"),
            ("ttl_ms", 60000),
        ],
    ),
    _res(
        V,
        "resources/read",
        5,
        {
            "resultType": "input_required",
            "inputRequests": {"workspace_roots": INPUT_REQUESTS_2026["workspace_roots"]},
            "requestState": "cmVhZDpyZWNlaXB0",
        },
        v26.InputRequiredResult,
        [
            ("result_type", "input_required"),
            ("input_requests.workspace_roots", v26.ListRootsRequest),
            ("input_requests.workspace_roots.params", UNSET),
        ],
        "input-required",
    ),
    _res(
        V,
        "prompts/list",
        6,
        {
            "resultType": "complete",
            "prompts": [
                {
                    "name": "trip_brief",
                    "title": "Trip brief",
                    "description": "One-page summary of a booking",
                    "icons": [{"src": "https://fly.example.com/static/brief.svg", "theme": "dark"}],
                    "arguments": [
                        {"name": "pnr", "title": "Booking reference", "required": True},
                        {"name": "language", "description": "ISO 639-1 code"},
                    ],
                    "_meta": {"fly/since": "3.0"},
                }
            ],
            "cacheScope": "public",
            "ttlMs": 3600000,
        },
        v26.ListPromptsResult,
        [
            ("prompts.0.icons.0.theme", "dark"),
            ("prompts.0.arguments.1.required", UNSET),
            ("cache_scope", "public"),
        ],
    ),
    _res(
        V,
        "prompts/get",
        7,
        {
            "resultType": "complete",
            "description": "Trip brief for Q7XK2L",
            "messages": [
                {"role": "assistant" if i in (1, 4) else "user", "content": block}
                for i, block in enumerate(_BLOCKS_2026)
            ],
            "_meta": SERVER_META_2026,
        },
        v26.GetPromptResult,
        [(f"messages.{i}.content", cls) for i, cls in enumerate(_BLOCK_TYPES_2026)]
        + [("result_type", "complete")],
    ),
    _res(
        V,
        "prompts/get",
        8,
        {"resultType": "input_required", "requestState": "cHJvbXB0OnN0ZXAy", "_meta": SERVER_META_2026},
        v26.InputRequiredResult,
        [("input_requests", UNSET), ("request_state", "cHJvbXB0OnN0ZXAy")],
        "input-required-state-only",
    ),
    _res(
        V,
        "tools/list",
        9,
        {
            "resultType": "complete",
            "tools": [
                {
                    "name": "book_flight",
                    "title": "Book a flight",
                    "description": "Books a seat; asks for seat preference and payment consent on the way.",
                    "inputSchema": {
                        "type": "object",
                        "properties": {
                            "flight": {"type": "string"},
                            "date": {"type": "string", "format": "date"},
                        },
                        "required": ["flight", "date"],
                    },
                    "outputSchema": {"type": "object", "properties": {"pnr": {"type": "string"}}},
                    "annotations": {
                        "title": "Book",
                        "readOnlyHint": False,
                        "destructiveHint": False,
                        "idempotentHint": False,
                        "openWorldHint": True,
                    },
                    "icons": [
                        {"src": "https://fly.example.com/static/ticket.svg", "mimeType": "image/svg+xml"}
                    ],
                    "_meta": {"fly/requiresPayment": True},
                }
            ],
            "nextCursor": "dG9vbHM6MQ==",
            "cacheScope": "public",
            "ttlMs": 600000,
            "_meta": SERVER_META_2026,
        },
        v26.ListToolsResult,
        [
            ("tools.0.annotations.open_world_hint", True),
            ("tools.0.icons.0", v26.Icon),
            ("result_type", "complete"),
            ("ttl_ms", 600000),
        ],
    ),
    _res(
        V,
        "tools/call",
        10,
        {
            "resultType": "input_required",
            "inputRequests": INPUT_REQUESTS_2026,
            "requestState": "Ym9vazpzdGVwMjpwbnI9UTdYSzJM",
            "_meta": SERVER_META_2026,
        },
        v26.InputRequiredResult,
        [
            ("input_requests.seat_preference", v26.ElicitRequest),
            ("input_requests.seat_preference.params", v26.ElicitRequestFormParams),
            (
                "input_requests.seat_preference.params.requested_schema.properties.seat",
                v26.TitledSingleSelectEnumSchema,
            ),
            (
                "input_requests.seat_preference.params.requested_schema.properties.meals",
                v26.UntitledMultiSelectEnumSchema,
            ),
            ("input_requests.seat_preference.params.requested_schema.properties.bags", v26.NumberSchema),
            ("input_requests.payment_consent.params", v26.ElicitRequestURLParams),
            ("input_requests.payment_consent.params.url", "https://pay.example.com/confirm/8d21"),
            ("input_requests.summarise_policy", v26.CreateMessageRequest),
            ("input_requests.summarise_policy.params.messages.1.content.0", v26.ToolUseContent),
            ("input_requests.summarise_policy.params.messages.2.content.0", v26.ToolResultContent),
            (
                "input_requests.summarise_policy.params.messages.2.content.0.structured_content",
                ["approval", 7],
            ),
            ("input_requests.summarise_policy.params.tool_choice.mode", "required"),
            ("input_requests.workspace_roots", v26.ListRootsRequest),
            ("input_requests.trip_folders.params", v26.ListRootsRequestParams),
            ("result_type", "input_required"),
        ],
        "input-required",
    ),
    _res(
        V,
        "tools/call",
        11,
        {
            "resultType": "complete",
            "content": _BLOCKS_2026,
            "structuredContent": [{"pnr": "Q7XK2L", "seat": "14C"}, {"pnr": "Q7XK2M", "seat": None}],
            "isError": False,
            "_meta": SERVER_META_2026,
        },
        v26.CallToolResult,
        [(f"content.{i}", cls) for i, cls in enumerate(_BLOCK_TYPES_2026)]
        + [("structured_content.0.seat", "14C"), ("result_type", "complete"), ("is_error", False)],
    ),
    _res(
        V,
        "tools/call",
        13,
        {
            "resultType": "complete",
            "content": [{"type": "text", "text": "Fare class no longer available."}],
            "structuredContent": "sold-out",
            "isError": True,
        },
        v26.CallToolResult,
        [("structured_content", "sold-out"), ("is_error", True)],
        "is-error-scalar-structured-content",
    ),
    _res(
        V,
        "completion/complete",
        12,
        {
            "resultType": "complete",
            "completion": {"values": ["LHR", "LGW", "LCY"], "total": 6, "hasMore": True},
            "_meta": SERVER_META_2026,
        },
        v26.CompleteResult,
        [("completion.values.2", "LCY"), ("result_type", "complete")],
    ),
    _res(
        V,
        "subscriptions/listen",
        "listen-1",
        {
            "resultType": "complete",
            "_meta": {
                "io.modelcontextprotocol/subscriptionId": "listen-1",
                "io.modelcontextprotocol/serverInfo": {"name": "fly-mcp", "version": "3.0.0"},
            },
        },
        v26.SubscriptionsListenResult,
        [(("meta", "io.modelcontextprotocol/subscriptionId"), "listen-1"), ("result_type", "complete")],
    ),
]

_SUB_2026: dict[str, Any] = {"io.modelcontextprotocol/subscriptionId": "listen-1"}

NOTIFICATIONS_2026 = [
    _note(
        V,
        "client",
        "notifications/cancelled",
        {"requestId": 10, "reason": "Traveller changed plans"},
        v26.CancelledNotificationParams,
        [("request_id", 10)],
        "from-client",
    ),
    _note(
        V,
        "server",
        "notifications/cancelled",
        {"requestId": "listen-1", "reason": "Subscription replaced", "_meta": _SUB_2026},
        v26.CancelledNotificationParams,
        [("meta", _SUB_2026)],
        "from-server",
    ),
    _note(
        V,
        "server",
        "notifications/message",
        {
            "level": "info",
            "logger": "fares",
            "data": {"fare": 412.8, "currency": "EUR"},
            "_meta": {"fly/req": 10},
        },
        v26.LoggingMessageNotificationParams,
        [("data.fare", 412.8)],
    ),
    _note(
        V,
        "server",
        "notifications/progress",
        {
            "progressToken": "book-10",
            "progress": 2,
            "total": 3,
            "message": "Seat held",
            "_meta": {"fly/step": "seat"},
        },
        v26.ProgressNotificationParams,
        [("message", "Seat held")],
    ),
    _note(
        V,
        "server",
        "notifications/prompts/list_changed",
        {"_meta": _SUB_2026},
        v26.NotificationParams,
        [("meta", _SUB_2026)],
    ),
    _note(V, "server", "notifications/resources/list_changed", {"_meta": _SUB_2026}, v26.NotificationParams),
    _note(
        V,
        "server",
        "notifications/resources/updated",
        {"uri": "https://fly.example.com/flights/LH2401/status", "_meta": _SUB_2026},
        v26.ResourceUpdatedNotificationParams,
        [("uri", "https://fly.example.com/flights/LH2401/status")],
    ),
    _note(V, "server", "notifications/tools/list_changed", None, v26.NotificationParams, [("meta", UNSET)]),
    _note(
        V,
        "server",
        "notifications/subscriptions/acknowledged",
        {
            "_meta": _SUB_2026,
            "notifications": {
                "toolsListChanged": True,
                "resourcesListChanged": True,
                "resourceSubscriptions": ["https://fly.example.com/flights/LH2401/status"],
            },
        },
        v26.SubscriptionsAcknowledgedNotificationParams,
        [
            ("notifications", v26.SubscriptionFilter),
            ("notifications.prompts_list_changed", UNSET),
            ("notifications.resource_subscriptions", ["https://fly.example.com/flights/LH2401/status"]),
        ],
    ),
]

ERRORS_2026 = [
    _err(
        V,
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
        "parse-error/id-null",
    ),
    _err(
        V,
        {
            "jsonrpc": "2.0",
            "id": "discover-1",
            "error": {
                "code": -32022,
                "message": "Unsupported protocol version",
                "data": {"requested": "2027-01-01", "supported": ["2026-07-28", "2025-11-25"]},
            },
        },
        "unsupported-protocol-version",
    ),
    _err(
        V,
        {
            "jsonrpc": "2.0",
            "id": 10,
            "error": {
                "code": -32021,
                "message": "book_flight needs URL elicitation",
                "data": {"requiredCapabilities": {"elicitation": {"url": {}}}},
            },
        },
        "missing-required-client-capability",
    ),
    _err(
        V,
        {
            "jsonrpc": "2.0",
            "id": 11,
            "error": {"code": -32020, "message": "Mcp-Method header does not match the body"},
        },
        "header-mismatch",
    ),
    _err(
        V,
        {
            "jsonrpc": "2.0",
            "error": {"code": -32600, "message": "Invalid request: body is not a JSON-RPC message"},
        },
        "no-id",
    ),
]


# == the tests =========================================================================================

REQUEST_SAMPLES = [*REQUESTS_2024, *REQUESTS_2025_03, *REQUESTS_2025_11, *REQUESTS_2026]
RESULT_SAMPLES = [*RESULTS_2024, *RESULTS_2025_03, *RESULTS_2025_11, *RESULTS_2026]
NOTIFICATION_SAMPLES = [
    *NOTIFICATIONS_2024,
    *NOTIFICATIONS_2025_03,
    *NOTIFICATIONS_2025_11,
    *NOTIFICATIONS_2026,
]
ERROR_SAMPLES = [*ERRORS_2024, *ERRORS_2025_03, *ERRORS_2025_11, *ERRORS_2026]


@pytest.mark.parametrize(("version", "sender", "message", "params_type", "checks"), REQUEST_SAMPLES)
def test_request_round_trips(
    version: str, sender: Side, message: dict[str, Any], params_type: type, checks: list[Check]
) -> None:
    spec = MODULES[version].methods.REQUESTS[message["method"]]
    assert spec.direction.sent_by_client() if sender == "client" else spec.direction.sent_by_server()
    codec = Codec.for_version(version, role=other(sender))
    decoded = codec.decode(wire(message))
    assert isinstance(decoded, Request)
    assert (decoded.id, decoded.method) == (message["id"], message["method"])
    params = codec.request_params(decoded)
    assert isinstance(params, params_type)
    check(params, checks)
    # An absent params member decodes as the defaults; a peer forwarding it leaves it absent.
    again = Codec.encode_request(decoded.id, decoded.method, params if "params" in message else UNSET)
    assert json.loads(again) == message


@pytest.mark.parametrize(("version", "method", "message", "result_type", "checks"), RESULT_SAMPLES)
def test_result_round_trips(
    version: str, method: str, message: dict[str, Any], result_type: type, checks: list[Check]
) -> None:
    spec = MODULES[version].methods.REQUESTS[method]
    codec = Codec.for_version(version, role="client" if spec.direction.sent_by_client() else "server")
    decoded = codec.decode(wire(message))
    assert isinstance(decoded, Response)
    assert decoded.id == message["id"]
    result = codec.result(spec, decoded)
    assert isinstance(result, result_type)
    check(result, checks)
    assert json.loads(Codec.encode_result(decoded.id, result)) == message


@pytest.mark.parametrize(("version", "sender", "message", "params_type", "checks"), NOTIFICATION_SAMPLES)
def test_notification_round_trips(
    version: str, sender: Side, message: dict[str, Any], params_type: type, checks: list[Check]
) -> None:
    spec = MODULES[version].methods.NOTIFICATIONS[message["method"]]
    assert spec.direction.sent_by_client() if sender == "client" else spec.direction.sent_by_server()
    codec = Codec.for_version(version, role=other(sender))
    decoded = codec.decode(wire(message))
    assert isinstance(decoded, Notification)
    params = codec.notification_params(decoded)
    assert isinstance(params, params_type)
    check(params, checks)
    again = Codec.encode_notification(decoded.method, params if "params" in message else UNSET)
    assert json.loads(again) == message


@pytest.mark.parametrize(("version", "message"), ERROR_SAMPLES)
def test_error_round_trips(version: str, message: dict[str, Any]) -> None:
    for role in ("client", "server"):
        codec = Codec.for_version(version, role=role)
        decoded = codec.decode(wire(message))
        assert isinstance(decoded, ErrorResponse)
        # An absent id must stay absent (2025-11-25 and later allow it); "id": null stays null.
        assert decoded.id == message.get("id", UNSET)
        assert (decoded.error.code, decoded.error.message) == (
            message["error"]["code"],
            message["error"]["message"],
        )
        again = Codec.encode_error(decoded.id, decoded.error.code, decoded.error.message, decoded.error.data)
        assert json.loads(again) == message


# -- coverage: every method of every version has samples ---------------------------------------------


def _embedded_methods(version: str) -> dict[str, str]:
    """Input request key -> method, for the input requests sampled inside 2026-07-28 results."""
    out: dict[str, str] = {}
    for sample_version, _, message, _, _ in _values(RESULT_SAMPLES):
        if sample_version == version:
            for key, request in message["result"].get("inputRequests", {}).items():
                out[key] = request["method"]
    return out


def _sampled(samples: Sequence[Any], version: str) -> list[tuple[Any, ...]]:
    return [values for values in _values(samples) if values[0] == version]


@pytest.mark.parametrize("version", VERSIONS)
def test_every_request_of_the_version_has_a_sample(version: str) -> None:
    table = MODULES[version].methods.REQUESTS
    sampled = {message["method"] for _, _, message, _, _ in _sampled(REQUEST_SAMPLES, version)}
    embedded = set(_embedded_methods(version).values())
    assert sampled | embedded == set(table)
    # Embedded (2026-07-28 input) requests are sampled inside InputRequiredResult, the others on their own.
    assert embedded == {method for method, spec in table.items() if spec.embedded}
    assert not sampled & embedded


@pytest.mark.parametrize("version", VERSIONS)
def test_every_result_of_the_version_has_a_sample(version: str) -> None:
    table = MODULES[version].methods.REQUESTS
    sampled = {method for _, method, _, _, _ in _sampled(RESULT_SAMPLES, version)}
    # The results of input requests travel back in inputResponses of the retried request.
    keys = _embedded_methods(version)
    answered = {
        keys[key]
        for _, _, message, _, _ in _sampled(REQUEST_SAMPLES, version)
        for key in message.get("params", {}).get("inputResponses", {})
    }
    assert sampled | answered == set(table)


@pytest.mark.parametrize("version", VERSIONS)
def test_every_notification_of_the_version_has_a_sample(version: str) -> None:
    sampled = {message["method"] for _, _, message, _, _ in _sampled(NOTIFICATION_SAMPLES, version)}
    assert sampled == set(MODULES[version].methods.NOTIFICATIONS)


@pytest.mark.parametrize("version", VERSIONS)
def test_both_way_messages_are_sampled_from_both_sides(version: str) -> None:
    methods = MODULES[version].methods
    for samples, table in (
        (REQUEST_SAMPLES, methods.REQUESTS),
        (NOTIFICATION_SAMPLES, methods.NOTIFICATIONS),
    ):
        for method, spec in table.items():
            if spec.direction.sent_by_client() and spec.direction.sent_by_server():
                senders = {
                    sender
                    for _, sender, message, _, _ in _sampled(samples, version)
                    if message["method"] == method
                }
                assert senders == {"client", "server"}, method


def test_the_expected_method_counts() -> None:
    counts = {
        version: (len(mod.methods.REQUESTS), len(mod.methods.NOTIFICATIONS))
        for version, mod in MODULES.items()
    }
    assert counts == {
        "2024-11-05": (15, 9),
        "2025-03-26": (15, 9),
        "2025-11-25": (20, 11),
        "2026-07-28": (13, 8),
    }


# -- content blocks --------------------------------------------------------------------------------------

CONTENT_KINDS = {
    "2024-11-05": {"text", "image", "resource/text", "resource/blob"},
    "2025-03-26": {"text", "image", "audio", "resource/text", "resource/blob"},
    "2025-11-25": {"text", "image", "audio", "resource_link", "resource/text", "resource/blob"},
    "2026-07-28": {"text", "image", "audio", "resource_link", "resource/text", "resource/blob"},
}


def _kind(block: dict[str, Any]) -> str:
    if block["type"] != "resource":
        return str(block["type"])
    return "resource/blob" if "blob" in block["resource"] else "resource/text"


def _tags(hint: Any) -> set[str]:
    if get_origin(hint) is list:
        (item,) = get_args(hint)
        return _tags(item)
    members = get_args(hint)
    if not members:
        return {str(hint.__struct_config__.tag)}
    return set().union(*(_tags(member) for member in members))


def _block_tags(struct: Any, member: str) -> set[str]:
    """The ``type`` tags of the content union of ``struct.member`` (blocks, a list of them, or both)."""
    return _tags(get_type_hints(struct)[member])


@pytest.mark.parametrize("version", VERSIONS)
def test_every_content_kind_is_sampled_in_tool_and_prompt_results(version: str) -> None:
    mod = MODULES[version]
    expected = CONTENT_KINDS[version]
    assert _block_tags(mod.CallToolResult, "content") == {kind.split("/")[0] for kind in expected}
    assert _block_tags(mod.PromptMessage, "content") == {kind.split("/")[0] for kind in expected}
    known = [
        m["result"]
        for v, method, m, _, _ in _values(RESULT_SAMPLES)
        if v == version and method == "tools/call"
    ]
    tool_kinds = [{_kind(block) for block in result["content"]} for result in known if "content" in result]
    assert expected in tool_kinds
    (prompt,) = [
        m["result"]
        for v, method, m, _, _ in _values(RESULT_SAMPLES)
        if v == version and method == "prompts/get" and "messages" in m["result"]
    ]
    assert {_kind(message["content"]) for message in prompt["messages"]} == expected


def test_sampling_content_kinds_2025_11_25() -> None:
    # Sampling with tools: a CreateMessageResult holds one block or an array of them.
    assert _block_tags(v25c.SamplingMessage, "content") == {
        "text",
        "image",
        "audio",
        "tool_use",
        "tool_result",
    }
    contents = [
        m["result"]["content"]
        for v, method, m, _, _ in _values(RESULT_SAMPLES)
        if v == "2025-11-25" and method == "sampling/createMessage" and "task" not in m["result"]
    ]
    shapes = {"array" if isinstance(c, list) else c["type"] for c in contents}
    assert shapes == {"array", "tool_result", "image"}
    assert {block["type"] for c in contents if isinstance(c, list) for block in c} == {"text", "tool_use"}


# -- JSON-RPC batches (2025-03-26 only) ----------------------------------------------------------------

BATCH_OF_REQUESTS: list[dict[str, Any]] = [
    {"jsonrpc": "2.0", "id": 101, "method": "tools/list", "params": {"cursor": "dG9vbHM6MA=="}},
    {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
    {
        "jsonrpc": "2.0",
        "id": "b-2",
        "method": "resources/read",
        "params": {"uri": "cal://team/events/2025-04-02/standup"},
    },
    {"jsonrpc": "2.0", "id": 103, "method": "ping"},
]
BATCH_OF_RESPONSES: list[dict[str, Any]] = [
    {
        "jsonrpc": "2.0",
        "id": 101,
        "result": {
            "tools": [
                {
                    "name": "free_slots",
                    "inputSchema": {"type": "object"},
                    "annotations": {"readOnlyHint": True},
                }
            ]
        },
    },
    {
        "jsonrpc": "2.0",
        "id": "b-2",
        "error": {
            "code": -32002,
            "message": "Resource not found",
            "data": {"uri": "cal://team/events/2025-04-02/standup"},
        },
    },
    {"jsonrpc": "2.0", "id": 103, "result": {}},
]


def test_batch_of_requests_decodes_into_a_list_2025_03_26() -> None:
    codec = Codec.for_version("2025-03-26", role="server")
    decoded = codec.decode(wire(BATCH_OF_REQUESTS))
    assert isinstance(decoded, list)
    assert [type(item) for item in decoded] == [Request, Notification, Request, Request]
    again: list[bytes] = []
    for item, original in zip(decoded, BATCH_OF_REQUESTS, strict=True):
        if isinstance(item, Request):
            params = codec.request_params(item)
            again.append(
                Codec.encode_request(item.id, item.method, params if "params" in original else UNSET)
            )
        else:
            assert isinstance(item, Notification)
            params = codec.notification_params(item)
            again.append(Codec.encode_notification(item.method, params if "params" in original else UNSET))
    first = decoded[0]
    assert isinstance(first, Request)
    assert isinstance(codec.request_params(first), v25a.ListToolsRequestParams)
    assert json.loads(Codec.encode_batch(again)) == BATCH_OF_REQUESTS


def test_batch_of_responses_decodes_into_a_list_2025_03_26() -> None:
    codec = Codec.for_version("2025-03-26", role="client")
    decoded = codec.decode(wire(BATCH_OF_RESPONSES))
    assert isinstance(decoded, list)
    tools, missing, pong = decoded
    assert isinstance(tools, Response) and isinstance(missing, ErrorResponse) and isinstance(pong, Response)
    tool_list = codec.result(v25a.methods.TOOLS_LIST, tools)
    assert isinstance(tool_list, v25a.ListToolsResult)
    assert tool_list.tools[0].annotations.read_only_hint is True  # type: ignore[union-attr]
    again = [
        Codec.encode_result(tools.id, tool_list),
        Codec.encode_error(missing.id, missing.error.code, missing.error.message, missing.error.data),
        Codec.encode_result(pong.id, codec.result(v25a.methods.PING, pong)),
    ]
    assert json.loads(Codec.encode_batch(again)) == BATCH_OF_RESPONSES


def test_batch_member_errors_are_kept_in_place_2025_03_26() -> None:
    codec = Codec.for_version("2025-03-26", role="server")
    decoded = codec.decode(wire([BATCH_OF_REQUESTS[0], {"id": 7, "method": "ping"}, 42]))
    assert isinstance(decoded, list)
    assert isinstance(decoded[0], Request)
    assert isinstance(decoded[1], WireError) and decoded[1].code == INVALID_REQUEST and decoded[1].id == 7
    assert isinstance(decoded[2], WireError) and decoded[2].code == INVALID_REQUEST
    with pytest.raises(WireError) as empty:
        codec.decode(b"[]")
    assert empty.value.code == INVALID_REQUEST


@pytest.mark.parametrize(
    "version", [pin.version for pin in load_pins() if not load(pin.version).methods.BATCHING]
)
@pytest.mark.parametrize("role", ["client", "server"])
def test_batch_is_rejected_where_the_version_has_none(version: str, role: Side) -> None:
    codec = Codec.for_version(version, role=role)
    with pytest.raises(WireError) as rejected:
        codec.decode(wire(BATCH_OF_REQUESTS if role == "server" else BATCH_OF_RESPONSES))
    assert rejected.value.code == INVALID_REQUEST == -32600


# -- 2026-07-28 specifics ----------------------------------------------------------------------------


def test_result_type_defaults_to_complete_2026_07_28() -> None:
    # A result from a server of an earlier version has no resultType: it counts as "complete".
    codec = Codec.for_version("2026-07-28", role="client")
    decoded = codec.decode(b'{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"ok"}]}}')
    assert isinstance(decoded, Response)
    result = codec.result(v26.methods.TOOLS_CALL, decoded)
    assert isinstance(result, v26.CallToolResult)
    assert result.result_type == "complete"


def test_input_required_is_told_apart_by_result_type_2026_07_28() -> None:
    codec = Codec.for_version("2026-07-28", role="client")
    decoded = codec.decode(
        b'{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required","requestState":"x"}}'
    )
    assert isinstance(decoded, Response)
    for spec in (v26.methods.TOOLS_CALL, v26.methods.PROMPTS_GET, v26.methods.RESOURCES_READ):
        assert isinstance(codec.result(spec, decoded), v26.InputRequiredResult)


@pytest.mark.parametrize("method", ["sampling/createMessage", "elicitation/create", "roots/list"])
def test_input_requests_are_not_standalone_requests_2026_07_28(method: str) -> None:
    params = INPUT_REQUESTS_2026[
        {
            "sampling/createMessage": "summarise_policy",
            "elicitation/create": "payment_consent",
            "roots/list": "trip_folders",
        }[method]
    ]["params"]
    codec = Codec.for_version("2026-07-28", role="client")
    decoded = codec.decode(wire({"jsonrpc": "2.0", "id": 77, "method": method, "params": params}))
    assert isinstance(decoded, Request)
    assert v26.methods.REQUESTS[method].embedded
    # Input requests travel only inside an InputRequiredResult, never as JSON-RPC requests.
    with pytest.raises(WireError) as rejected:
        codec.request_params(decoded)
    assert rejected.value.code == METHOD_NOT_FOUND
