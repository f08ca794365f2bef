"""Clients on the TypeScript SDK through ``mcpbind proxy --port P -- ...`` to the reference server
``@modelcontextprotocol/server-everything`` over stdio (a server of the 2025 era):

* the TypeScript SDK v2's client (tests/interop/ts_proxy_client.mjs, run once per negotiation
  against a proxy of its own, printing what it saw as JSON), in a 2025 session (``legacy``) and
  pinned to 2026-07-28: tools (plain, structured, annotated), progress, sampling, elicitation
  and roots answered by the client (in 2026-07-28 through ``InputRequiredResult`` rounds),
  resources and templates, prompts, completion, cancelling a long call (an ``AbortSignal``) and,
  in the session, ``logging/setLevel`` with the server's log messages and a subscription's
  ``notifications/resources/updated``;
* the MCP Inspector's command-line client (each call a process and a session of its own): lists
  and calls of tools, resources, templates and prompts, ``logging/setLevel``, and errors.

The SDKs are installed with npm on first use, as tests/interop/test_ts_v2.py and
test_inspector_cli.py install them; without node or npm the tests skip (fail under CI=true).
Nothing here needs an event loop: the clients, the proxy and the server are child processes.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness import child_env
from tests.interop.proxy_harness import everything_proxy
from tests.interop.test_inspector_cli import BUILD, CALL_TIMEOUT, installed_cli
from tests.interop.test_ts_v2 import installed_modules
from tests.interop.test_ts_v2 import node as ts_node

SCRIPT = Path(__file__).with_name("ts_proxy_client.mjs")
MODERN = "2026-07-28"
TS_ROOT = "file:///tmp/mcpbind-proxy-ts"


# -- the TypeScript SDK v2's client ---------------------------------------------------------------


@pytest.fixture(scope="module", params=["legacy", MODERN])
def seen(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """What the TypeScript client saw through a proxy of its own (server-everything asks a
    connection's roots once), negotiating as the parameter says."""
    node = ts_node()
    modules = installed_modules()
    with everything_proxy() as url:
        done = subprocess.run(
            [node, str(SCRIPT), str(modules), request.param, url],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert "connect" not in found["errors"], found["errors"]["connect"]
    assert found["version"] == ("2025-11-25" if request.param == "legacy" else MODERN)
    yield found


def outcome(seen: dict[str, Any], step: str) -> Any:
    """What the script saw at ``step``; the test fails with the error it met instead."""
    assert step not in seen["errors"], seen["errors"][step]
    return seen[step]


def test_ts_tools(seen: dict[str, Any]) -> None:
    tools = set(outcome(seen, "tools"))
    assert {
        "echo",
        "get-sum",
        "trigger-sampling-request",
        "trigger-elicitation-request",
        "get-roots-list",
    } <= tools
    assert outcome(seen, "echo") == ["Echo: from ts"]
    assert outcome(seen, "sum") == ["The sum of 40 and 2 is 42."]
    structured = outcome(seen, "structured")
    assert set(structured["structured"]) == {"temperature", "conditions", "humidity"}
    assert json.loads(structured["text"][0]) == structured["structured"]
    assert outcome(seen, "annotated") == [
        {"type": "text", "annotations": {"audience": ["user"], "priority": 0.7}},
        {"type": "image", "annotations": {"audience": ["user"], "priority": 0.5}, "mimeType": "image/png"},
    ]


def test_ts_progress_and_cancellation(seen: dict[str, Any]) -> None:
    progress = outcome(seen, "progress")
    assert progress["text"] == ["Long running operation completed. Duration: 0.3 seconds, Steps: 3."]
    assert progress["seen"] == [[1, 3], [2, 3], [3, 3]]
    # aborted after its first progress notification; the proxy goes on serving
    assert outcome(seen, "cancelled") == {"outcome": "rejected: SdkError: enough", "after": ["Echo: after"]}


def test_ts_sampling_and_elicitation(seen: dict[str, Any]) -> None:
    sampled = outcome(seen, "sampling")[0]
    assert json.loads(sampled.split(":", 1)[1])["content"] == {"type": "text", "text": "ts sampled"}
    elicited = outcome(seen, "elicitation")
    assert elicited[:2] == [
        "✅ User provided the requested information!",
        "User inputs:\n- Name: Grace\n- Agreed to terms: false",
    ]
    assert ["sampling", "Resource trigger-sampling-request context: ts prompt"] in seen["asked"]
    assert ["elicitation", "Please provide inputs for the following fields:"] in seen["asked"]


def test_ts_roots(seen: dict[str, Any]) -> None:
    assert f"URI: {TS_ROOT}" in outcome(seen, "roots")[0]
    assert ["roots", None] in seen["asked"]


def test_ts_resources_prompts_and_completion(seen: dict[str, Any]) -> None:
    resources = outcome(seen, "resources")
    assert "demo://resource/static/document/architecture.md" in resources["listed"]
    assert sorted(resources["templates"]) == [
        "demo://resource/dynamic/blob/{resourceId}",
        "demo://resource/dynamic/text/{resourceId}",
    ]
    assert resources["read"].startswith("Resource 4: This is a plaintext resource")
    prompts = outcome(seen, "prompts")
    assert {"simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"} <= set(prompts["listed"])
    assert prompts["got"] == ["What's weather in Lyon?"]
    assert outcome(seen, "completion") == ["Alice"]


def test_ts_session_log_messages_and_subscription(seen: dict[str, Any]) -> None:
    if seen["era"] != "legacy":
        pytest.skip("logging/setLevel and resources/subscribe belong to a 2025 session")
    assert outcome(seen, "subscribed") is True
    assert any(level == "info" and data.startswith("Received Subscribe") for level, data in seen["logs"])


# -- the Inspector CLI ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def inspector_url() -> Iterator[str]:
    installed_cli()
    with everything_proxy() as url:
        yield url


def run_cli(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    # (in build/: the CLI finds its package.json relative to the working directory)
    node = installed_cli()
    return subprocess.run(
        [node, "index.js", url, "--transport", "http", *args],
        cwd=BUILD,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=CALL_TIMEOUT,
        check=False,
    )


def inspect(url: str, *args: str) -> Any:
    done = run_cli(url, *args)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stderr}"
    return json.loads(done.stdout)


def test_inspector_tools(inspector_url: str) -> None:
    tools = {tool["name"]: tool for tool in inspect(inspector_url, "--method", "tools/list")["tools"]}
    assert {"echo", "get-sum", "get-structured-content", "trigger-long-running-operation"} <= set(tools)
    assert tools["echo"]["inputSchema"]["properties"]["message"]["type"] == "string"
    call = ("--method", "tools/call", "--tool-name")
    assert inspect(inspector_url, *call, "echo", "--tool-arg", "message=inspected") == {
        "content": [{"type": "text", "text": "Echo: inspected"}]
    }
    weather = inspect(inspector_url, *call, "get-structured-content", "--tool-arg", "location=New York")
    assert json.loads(weather["content"][0]["text"]) == weather["structuredContent"]
    long = inspect(
        inspector_url, *call, "trigger-long-running-operation", "--tool-arg", "duration=0.2", "steps=2"
    )
    assert long["content"][0]["text"] == "Long running operation completed. Duration: 0.2 seconds, Steps: 2."
    # an unknown tool: server-everything's error result, through the proxy
    unknown = inspect(inspector_url, *call, "nope")
    assert unknown["isError"] is True
    assert unknown["content"] == [{"type": "text", "text": "MCP error -32602: Tool nope not found"}]


def test_inspector_resources_and_prompts(inspector_url: str) -> None:
    listed = inspect(inspector_url, "--method", "resources/list")["resources"]
    assert "demo://resource/static/document/features.md" in {resource["uri"] for resource in listed}
    templates = inspect(inspector_url, "--method", "resources/templates/list")["resourceTemplates"]
    assert "demo://resource/dynamic/text/{resourceId}" in {t["uriTemplate"] for t in templates}
    read = inspect(inspector_url, "--method", "resources/read", "--uri", "demo://resource/dynamic/text/9")
    [contents] = read["contents"]
    assert contents["uri"] == "demo://resource/dynamic/text/9" and contents["text"].startswith("Resource 9:")
    got = inspect(
        inspector_url, "--method", "prompts/get", "--prompt-name", "args-prompt", "--prompt-args", "city=Rome"
    )
    assert got["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "What's weather in Rome?"}}
    ]


def test_inspector_set_logging_level(inspector_url: str) -> None:
    assert inspect(inspector_url, "--method", "logging/setLevel", "--log-level", "debug") == {}
