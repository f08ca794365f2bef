"""sampling/createMessage goes out only with what the client declared: ``sampling.tools`` for
tools and toolChoice, ``sampling.context`` for includeContext, ``tasks`` for a task; a Client
declares them and refuses what it did not declare."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from mcpbind.client.client import Client
from mcpbind.protocol.connection import missing_client_capability
from mcpbind.protocol.errors import INVALID_PARAMS, INVALID_REQUEST, McpError
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.server import Server
from mcpbind.versions import HANDSHAKE_VERSIONS
from tests.harness import connected, connected_recording

pytestmark = pytest.mark.anyio

WEATHER = types.Tool(
    name="get_weather", input_schema={"type": "object", "properties": {"city": {"type": "string"}}}
)
BASE = types.CreateMessageRequestParams(
    max_tokens=10,
    messages=[types.SamplingMessage(role="user", content=types.TextContent(text="Weather in Paris?"))],
)
# name -> the request's extra fields, and the client capability each one needs (None: none).
VARIANTS: dict[str, tuple[dict[str, Any], str | None]] = {
    "plain": ({}, None),
    "tools": ({"tools": [WEATHER]}, "sampling.tools"),
    "toolChoice": ({"tool_choice": types.ToolChoice(mode="auto")}, "sampling.tools"),
    "includeContext none": ({"include_context": "none"}, None),
    "includeContext thisServer": ({"include_context": "thisServer"}, "sampling.context"),
    "task": ({"task": types.TaskMetadata(ttl=1000)}, "tasks.requests.sampling.createMessage"),
}


class Sampler:
    """A client's sampling handler that answers and remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list[types.CreateMessageRequestParams] = []

    async def __call__(
        self, params: types.CreateMessageRequestParams, ctx: RequestContext
    ) -> types.CreateMessageResult:
        self.asked.append(params)
        return types.CreateMessageResult(role="assistant", content=types.TextContent(text="sunny"), model="m")


def sampling_server(lie: bool = False) -> Server:
    """``sample`` sends the named variant and reports the answer or the error. With ``lie`` the
    server believes the client declared everything (to see the client refuse)."""
    server = Server("samples", "1")

    @server.tool()
    async def sample(variant: str, ctx: RequestContext) -> str:
        if lie:
            ctx.session.connection.peer.capabilities = types.ClientCapabilities(
                sampling=types.ClientCapabilitiesSampling(tools={}, context={})
            )
        params = msgspec.structs.replace(BASE, **VARIANTS[variant][0])
        try:
            result = await ctx.create_message(params)
        except McpError as exc:
            return f"error {exc.code}: {exc.message}"
        assert isinstance(result, types.CreateMessageResult)
        return "answered"

    return server


def text(result: types.CallToolResult) -> str:
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text


async def test_what_the_client_did_not_declare_is_refused_before_sending(anyio_backend: str) -> None:
    sampler = Sampler()
    async with connected_recording(
        sampling_server(), Client("c", "1", sampling=sampler, versions=HANDSHAKE_VERSIONS)
    ) as (session, sent):
        answers = {name: text(await session.call_tool("sample", {"variant": name})) for name in VARIANTS}
    for name, (_, needed) in VARIANTS.items():
        if needed is None:
            assert answers[name] == "answered", name
        else:
            assert answers[name].startswith(f"error {INVALID_REQUEST}: "), name
            assert f"'{needed}'" in answers[name] and "nothing was sent" in answers[name], name
    assert len(sampler.asked) == 2
    assert all(params.tools is types.UNSET and params.task is types.UNSET for params in sampler.asked)
    assert sum(b'"method":"sampling/createMessage"' in data for data in sent) == 2


async def test_a_client_declaring_sampling_tools_and_context_gets_them(anyio_backend: str) -> None:
    sampler = Sampler()
    client = Client(
        "c", "1", sampling=sampler, sampling_tools=True, sampling_context=True, versions=HANDSHAKE_VERSIONS
    )
    assert client.capabilities.sampling == types.ClientCapabilitiesSampling(tools={}, context={})
    async with connected(sampling_server(), client) as session:
        for name in ("tools", "toolChoice", "includeContext thisServer"):
            assert text(await session.call_tool("sample", {"variant": name})) == "answered", name
    assert sampler.asked[0].tools == [WEATHER]
    assert sampler.asked[1].tool_choice == types.ToolChoice(mode="auto")
    assert sampler.asked[2].include_context == "thisServer"
    assert (
        Client("c", "1", sampling=sampler, versions=HANDSHAKE_VERSIONS).capabilities.sampling
        == types.ClientCapabilitiesSampling()
    )
    with pytest.raises(ValueError, match="sampling handler"):
        Client("c", "1", sampling_tools=True, versions=HANDSHAKE_VERSIONS)


async def test_a_client_without_sampling_tools_refuses_tools(anyio_backend: str) -> None:
    sampler = Sampler()
    async with connected(
        sampling_server(lie=True), Client("c", "1", sampling=sampler, versions=HANDSHAKE_VERSIONS)
    ) as session:
        for name in ("tools", "toolChoice"):
            answer = text(await session.call_tool("sample", {"variant": name}))
            assert answer.startswith(f"error {INVALID_PARAMS}: ") and "'sampling.tools'" in answer
        # includeContext is a wish the client may ignore: it is not refused.
        assert text(await session.call_tool("sample", {"variant": "includeContext thisServer"})) == "answered"
    assert len(sampler.asked) == 1


def test_missing_client_capability() -> None:
    caps = types.ClientCapabilities(
        sampling=types.ClientCapabilitiesSampling(),
        tasks=types.ClientCapabilitiesTasks(
            requests=types.ClientCapabilitiesTasksRequests(
                elicitation=types.ClientCapabilitiesTasksRequestsElicitation(create={})
            )
        ),
        elicitation=types.ClientCapabilitiesElicitation(),
    )
    task = types.TaskMetadata()
    form = types.ElicitRequestFormParams(
        message="?", requested_schema=types.ElicitRequestFormParamsRequestedSchema(properties={}), task=task
    )
    assert missing_client_capability(caps, "elicitation/create", form) is None
    assert missing_client_capability(caps, "roots/list", types.RequestParams()) == ("roots", "roots/list")
    assert missing_client_capability(None, "sampling/createMessage", BASE) == (
        "sampling",
        "sampling/createMessage",
    )
    tasked = msgspec.structs.replace(BASE, task=task)
    assert missing_client_capability(caps, "sampling/createMessage", tasked) == (
        "tasks.requests.sampling.createMessage",
        "sampling/createMessage as a task",
    )
    assert missing_client_capability(caps, "tools/list", None) is None
