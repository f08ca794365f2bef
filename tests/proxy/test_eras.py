"""Clients of both eras through the proxy to servers of both eras: the handshake versions
(2025, a session) and the stateless 2026-07-28. Where the eras differ the proxy bridges the
questions a server asks mid-call: a stateless client in front of a session's server gets them as
``InputRequiredResult`` rounds while the server's call is held; a session's client in front of
a stateless server is asked them mid-call while the proxy drives the rounds."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec
import pytest

from mcpbind.protocol.errors import INVALID_PARAMS, McpError
from mcpbind.proxy import Upstream
from mcpbind.proxy.specs import raw_request
from tests.proxy.proxying import (
    FRONTS,
    Answers,
    Front,
    front_client,
    in_memory,
    running_proxy,
    stateless_params,
)
from tests.proxy.upstreams import ERAS, Probe, build_upstream, version_of

pytestmark = pytest.mark.anyio

TOOLS_CALL = raw_request("tools/call")


@pytest.mark.parametrize("server_era", ERAS)
@pytest.mark.parametrize("client_era", ERAS)
@pytest.mark.parametrize("front", FRONTS)
async def test_each_era_to_each_era(front: Front, client_era: str, server_era: str) -> None:
    probe, answers = Probe(), Answers()
    upstream = Upstream(in_memory(build_upstream(server_era, probe)))
    async with running_proxy(upstream, front) as proxy, proxy.connect(answers.client(client_era)) as remote:
        assert remote.protocol_version == version_of(client_era)
        assert upstream.remote is not None and upstream.remote.protocol_version == version_of(server_era)
        assert remote.server_info.name == "upstream" and remote.server_info.version == "1.2.3"
        assert remote.instructions == "be nice"
        assert (await remote.call_tool("add", {"a": 2, "b": 40})).structured_content == {"result": 42}

        # The tool asks a name (elicitation), then for a greeting (sampling), mid-call.
        result = await remote.call_tool("ask", {})
        assert result.content[0].text == "Hello Ada"  # type: ignore[union-attr]
        assert answers.asked == ["Your name?", "sampling"]
        # A session's server runs the call once (held across the stateless client's rounds);
        # a stateless server runs its handler again each round, as the protocol has it.
        assert probe.runs["ask"] == (1 if server_era == "2025" else 3)
        assert len(upstream.held) == 0


async def test_a_stateless_server_s_rounds_pass_through_untouched() -> None:
    """2026 client, 2026 server: the server's ``InputRequiredResult`` reaches the client
    byte for byte (its own request state, not one of the proxy's)."""
    probe, answers = Probe(), Answers()
    sent: list[bytes] = []
    upstream = Upstream(in_memory(build_upstream("2026", probe), sent))
    client = answers.client("2026")
    async with running_proxy(upstream) as proxy, proxy.connect(client) as remote:
        raw = await remote.session.request(TOOLS_CALL, stateless_params(client, {"name": "ask"}))
        first = msgspec.json.decode(raw)
        assert first["resultType"] == "input_required"
        assert [r["method"] for r in first["inputRequests"].values()] == ["elicitation/create"]
        assert len(upstream.held) == 0  # nothing of the proxy's
    assert any(bytes(raw) in message for message in sent), "the result was not the server's own"
    assert first["requestState"] in b"".join(sent).decode()


async def test_a_session_server_s_call_is_held_across_a_stateless_client_s_rounds() -> None:
    """2026 client, 2025 server: the first round ends with the server's question and a request
    state; the retry, from another connection, answers it and the same call goes on."""
    probe, answers = Probe(), Answers()
    upstream = Upstream(in_memory(build_upstream("2025", probe)))
    first_client, second_client = answers.client("2026"), answers.client("2026")
    async with running_proxy(upstream, "http") as proxy:
        async with proxy.connect(first_client) as first:
            raw = await first.session.request(TOOLS_CALL, stateless_params(first_client, {"name": "ask"}))
        asked: dict[str, Any] = msgspec.json.decode(raw)
        assert asked["resultType"] == "input_required"
        ((key, question),) = asked["inputRequests"].items()
        assert question["method"] == "elicitation/create"
        assert question["params"]["message"] == "Your name?"
        assert len(upstream.held) == 1 and probe.runs["ask"] == 1
        retry = {
            "name": "ask",
            "inputResponses": {key: {"action": "accept", "content": {"name": "Bob"}}},
            "requestState": asked["requestState"],
        }
        async with proxy.connect(second_client) as second:
            raw = await second.session.request(TOOLS_CALL, stateless_params(second_client, retry))
            # The next question (sampling) comes in the next round, the same call held.
            sampled: dict[str, Any] = msgspec.json.decode(raw)
            assert sampled["resultType"] == "input_required"
            ((key, question),) = sampled["inputRequests"].items()
            assert question["method"] == "sampling/createMessage"
            assert sampled["requestState"] != asked["requestState"]
            retry = {
                "name": "ask",
                "inputResponses": {
                    key: {"role": "assistant", "content": {"type": "text", "text": "Hi"}, "model": "m"}
                },
                "requestState": sampled["requestState"],
            }
            raw = await second.session.request(TOOLS_CALL, stateless_params(second_client, retry))
        done: dict[str, Any] = msgspec.json.decode(raw)
        assert done["resultType"] == "complete"
        assert done["content"] == [{"type": "text", "text": "Hi Bob"}]
        assert probe.runs["ask"] == 1  # the same call, never started again
        assert len(upstream.held) == 0


async def test_an_unknown_request_state_is_invalid_params() -> None:
    probe, answers = Probe(), Answers()
    upstream = Upstream(in_memory(build_upstream("2025", probe)))
    client = answers.client("2026")
    async with running_proxy(upstream) as proxy, proxy.connect(client) as remote:
        retry = {
            "name": "ask",
            "inputResponses": {"proxy-1": {"action": "decline"}},
            "requestState": "made-up",
        }
        with pytest.raises(McpError) as refused:
            await remote.session.request(TOOLS_CALL, stateless_params(client, retry))
        assert refused.value.code == INVALID_PARAMS
        assert "requestState" in refused.value.message
        assert probe.runs["ask"] == 0


async def test_a_held_call_never_retried_is_cancelled_upstream() -> None:
    """The server's call waits ``input_timeout`` for the client's retry; then it is cancelled
    upstream and its request state is refused as expired."""
    probe, answers = Probe(), Answers()
    upstream = Upstream(in_memory(build_upstream("2025", probe)), input_timeout=0.2)
    client = answers.client("2026")
    async with running_proxy(upstream) as proxy, proxy.connect(client) as remote:
        raw = await remote.session.request(TOOLS_CALL, stateless_params(client, {"name": "ask"}))
        asked: dict[str, Any] = msgspec.json.decode(raw)
        assert asked["resultType"] == "input_required" and len(upstream.held) == 1
        with anyio.fail_after(10):
            await probe.ask_cancelled.wait()
        assert len(upstream.held) == 0
        ((key, _),) = asked["inputRequests"].items()
        late = {
            "name": "ask",
            "inputResponses": {key: {"action": "accept", "content": {"name": "Ada"}}},
            "requestState": asked["requestState"],
        }
        with pytest.raises(McpError) as refused:
            await remote.session.request(TOOLS_CALL, stateless_params(client, late))
        assert refused.value.code == INVALID_PARAMS and refused.value.data == {"reason": "expired"}
        assert probe.runs["ask"] == 1


@pytest.mark.parametrize("server_era", ERAS)
@pytest.mark.parametrize("client_era", ERAS)
async def test_a_client_that_cannot_answer_is_not_asked(client_era: str, server_era: str) -> None:
    """A client declaring neither elicitation nor sampling calls the tool that asks: the call
    fails at once, nothing is left held or in flight, and the other client (idle, able to
    answer) is not asked another's question."""
    probe, answers = Probe(), Answers()
    upstream = Upstream(in_memory(build_upstream(server_era, probe)))
    async with (
        running_proxy(upstream) as proxy,
        proxy.connect(answers.client("2025")),
        proxy.connect(front_client(client_era)) as mute,
    ):
        with anyio.fail_after(10), pytest.raises(McpError):
            await mute.call_tool("ask", {})
        assert len(upstream.held) == 0 and len(upstream.in_flight) == 0
        assert answers.asked == []


async def test_calls_held_are_bounded() -> None:
    """``max_held``: one more call asking a question is refused, and the server's call of it
    cancelled; the call held goes on."""
    probe, answers = Probe(), Answers()
    upstream = Upstream(in_memory(build_upstream("2025", probe)), max_held=1)
    client = answers.client("2026")
    async with running_proxy(upstream) as proxy, proxy.connect(client) as remote:
        raw = await remote.session.request(TOOLS_CALL, stateless_params(client, {"name": "ask"}))
        asked: dict[str, Any] = msgspec.json.decode(raw)
        with pytest.raises(McpError) as refused:
            await remote.session.request(TOOLS_CALL, stateless_params(client, {"name": "ask"}))
        assert "Too many calls wait for input (1)" in refused.value.message
        with anyio.fail_after(10):
            await probe.ask_cancelled.wait()
        assert len(upstream.held) == 1 and probe.runs["ask"] == 2
        ((key, _),) = asked["inputRequests"].items()
        retry = {
            "name": "ask",
            "inputResponses": {key: {"action": "decline"}},
            "requestState": asked["requestState"],
        }
        raw = await remote.session.request(TOOLS_CALL, stateless_params(client, retry))
        done = msgspec.json.decode(raw)
        assert done["content"] == [{"type": "text", "text": "no name (decline)"}]
        assert len(upstream.held) == 0
