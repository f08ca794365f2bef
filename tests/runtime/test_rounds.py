"""Multi round-trip requests (MCP 2026-07-28), server side, as a client sees them on the wire:
a handler's ``ctx.elicit`` / ``ctx.create_message`` / ``ctx.list_roots`` end the round with an
``InputRequiredResult``; the retry with ``inputResponses`` and ``requestState`` gets the answers.
The same handlers serve a 2025 session with real requests mid-call."""

from __future__ import annotations

import base64
import contextvars
import json
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import msgspec
import pytest

from mcpbind import Client, Context, Server, types
from mcpbind.protocol.errors import McpError, URLElicitationRequiredError
from mcpbind.runtime.request_state import RequestState, RequestStateSigner
from mcpbind.server.caching import CacheHint
from mcpbind.server.elicitation import elicit_form, notify_elicitation_complete
from mcpbind.transports.memory import memory_pair
from tests.harness import connected

pytestmark = pytest.mark.anyio

VERSION = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
ALL_CAPABILITIES: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}}

Rpc = Callable[..., Awaitable[dict[str, Any]]]


def meta(capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return {VERSION: "2026-07-28", CAPABILITIES: ALL_CAPABILITIES if capabilities is None else capabilities}


@asynccontextmanager
async def raw(server: Server) -> AsyncIterator[Rpc]:
    """``rpc(method, params)``: a stateless request as raw JSON, its response as a dict."""
    client_end, server_end = memory_pair()
    ids = iter(range(1, 1000))

    async def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
        ident = next(ids)
        await client_end.send(
            json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}).encode()
        )
        while True:
            message: dict[str, Any] = json.loads(await client_end.receive())
            if message.get("id") == ident:
                return message

    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run, server_end)
        yield rpc
        await client_end.aclose()
        tg.cancel_scope.cancel()


class Name(msgspec.Struct):
    name: str


def sampling_params(text: str) -> types.CreateMessageRequestParams:
    return types.CreateMessageRequestParams(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(text=text))], max_tokens=50
    )


def greeting_server(**options: Any) -> tuple[Server, list[str]]:
    """A tool that elicits a name, then samples a greeting for it (two questions)."""
    server = Server("rounds", "1.0", **options)
    runs: list[str] = []

    @server.tool()
    async def greet(language: str, ctx: Context) -> str:
        runs.append(language)  # before the asks: runs once per round
        outcome = await elicit_form(ctx, "Your name?", Name)
        if outcome.value is None:
            return f"no name ({outcome.action})"
        sampled = await ctx.create_message(sampling_params(f"Greet {outcome.value.name} in {language}"))
        assert isinstance(sampled, types.CreateMessageResult)
        assert isinstance(sampled.content, types.TextContent)
        return f"{sampled.content.text} (model {sampled.model})"

    return server, runs


NAME_ANSWER = {"action": "accept", "content": {"name": "Ada"}}
SAMPLED_ANSWER = {"role": "assistant", "content": {"type": "text", "text": "Bonjour Ada"}, "model": "m1"}


def call(arguments: dict[str, Any], **retry: Any) -> dict[str, Any]:
    return {"_meta": meta(), "name": "greet", "arguments": arguments, **retry}


async def test_a_tool_asks_twice_and_answers_on_the_third_round() -> None:
    server, runs = greeting_server()
    async with raw(server) as rpc:
        first = (await rpc("tools/call", call({"language": "fr"})))["result"]
        assert first["resultType"] == "input_required"
        assert "ttlMs" not in first and "cacheScope" not in first
        assert first["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "rounds"
        assert list(first["inputRequests"]) == ["elicitation-1"]
        asked = first["inputRequests"]["elicitation-1"]
        assert asked["method"] == "elicitation/create"
        assert set(asked) == {"method", "params"}  # no id, no jsonrpc
        assert asked["params"]["message"] == "Your name?"
        assert asked["params"]["requestedSchema"]["properties"] == {"name": {"type": "string"}}

        # The retry: the same request (its arguments in another order do not matter).
        second = (
            await rpc(
                "tools/call",
                call(
                    {"language": "fr"},
                    inputResponses={"elicitation-1": NAME_ANSWER},
                    requestState=first["requestState"],
                ),
            )
        )["result"]
        assert second["resultType"] == "input_required"
        assert list(second["inputRequests"]) == ["sampling-2"]
        sampling = second["inputRequests"]["sampling-2"]
        assert sampling == {
            "method": "sampling/createMessage",
            "params": {
                "maxTokens": 50,
                "messages": [{"role": "user", "content": {"type": "text", "text": "Greet Ada in fr"}}],
            },
        }

        # The last round carries only the new answer: the first comes back in requestState.
        third = (
            await rpc(
                "tools/call",
                call(
                    {"language": "fr"},
                    inputResponses={"sampling-2": SAMPLED_ANSWER, "unknown": {"ignored": True}},
                    requestState=second["requestState"],
                ),
            )
        )["result"]
    assert third["resultType"] == "complete"
    assert third["content"] == [{"type": "text", "text": "Bonjour Ada (model m1)"}]
    assert runs == ["fr", "fr", "fr"]


async def test_the_same_tool_on_a_2025_session_asks_mid_call() -> None:
    server, runs = greeting_server()
    asked: list[str] = []

    async def elicit(params: Any, ctx: Context) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Grace"})

    async def sample(params: Any, ctx: Context) -> types.CreateMessageResult:
        asked.append(params.messages[0].content.text)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(text="Hi Grace"), model="m2"
        )

    client = Client("c", "1", elicitation=elicit, sampling=sample)
    async with connected(server, client) as session:
        assert session.protocol_version == "2025-11-25"
        result = await session.call_tool("greet", {"language": "en"})
    assert result.content == [types.TextContent(text="Hi Grace (model m2)")]
    assert asked == ["Your name?", "Greet Grace in en"]
    assert runs == ["en"]  # run once: the answers came mid-call


async def test_a_declined_elicitation_ends_after_one_retry() -> None:
    server, _ = greeting_server()
    async with raw(server) as rpc:
        first = (await rpc("tools/call", call({"language": "fr"})))["result"]
        done = (
            await rpc(
                "tools/call",
                call(
                    {"language": "fr"},
                    inputResponses={"elicitation-1": {"action": "decline"}},
                    requestState=first["requestState"],
                ),
            )
        )["result"]
    assert done["content"] == [{"type": "text", "text": "no name (decline)"}]


async def _first_state(rpc: Rpc) -> str:
    first = (await rpc("tools/call", call({"language": "fr"})))["result"]
    state: str = first["requestState"]
    return state


def _retry(state: str, language: str = "fr") -> dict[str, Any]:
    return call({"language": language}, inputResponses={"elicitation-1": NAME_ANSWER}, requestState=state)


def _tampered(state: str) -> str:
    """The state with its answers changed, re-encoded but not re-signed."""
    prefix, body, mac = state.split(".")
    decoded = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    decoded[3] = 0  # the round
    new_body = base64.urlsafe_b64encode(json.dumps(decoded).encode()).rstrip(b"=").decode()
    return f"{prefix}.{new_body}.{mac}"


@pytest.mark.parametrize(
    ("spoil", "reason", "words"),
    [
        (
            lambda state: "m1.Zm9yZ2Vk." + base64.urlsafe_b64encode(b"x" * 32).decode(),
            "signature",
            "signature",
        ),
        (_tampered, "signature", "signature does not match"),
        (lambda state: state.replace("m1.", "m7.", 1), "format", "format 7"),
        (lambda state: "not a state", "malformed", "not a requestState"),
        (lambda state: "m1.!!!.???", "malformed", "base64url"),
    ],
)
async def test_a_forged_or_tampered_request_state_is_refused(
    spoil: Callable[[str], str], reason: str, words: str
) -> None:
    server, runs = greeting_server()
    async with raw(server) as rpc:
        state = await _first_state(rpc)
        error = (await rpc("tools/call", _retry(spoil(state))))["error"]
    assert error["code"] == -32602
    assert error["data"] == {"reason": reason}
    assert words in error["message"] and "requestState refused" in error["message"]
    assert runs == ["fr"]  # the handler did not run on the refused retry


async def test_a_request_state_is_refused_on_another_request() -> None:
    server, _ = greeting_server()

    @server.prompt()
    async def story(topic: str, ctx: Context) -> str:
        outcome = await elicit_form(ctx, "Whose story?", Name)
        return f"{topic} of {outcome.value.name if outcome.value else '?'}"

    async with raw(server) as rpc:
        state = await _first_state(rpc)
        other_params = (await rpc("tools/call", _retry(state, language="de")))["error"]
        other_method = (
            await rpc(
                "prompts/get",
                {"_meta": meta(), "name": "story", "arguments": {"topic": "fr"}, "requestState": state},
            )
        )["error"]
    for error in (other_params, other_method):
        assert error["code"] == -32602 and error["data"] == {"reason": "request"}
        assert "issued for another request" in error["message"]


async def test_an_expired_request_state_is_refused() -> None:
    now = [1_000_000.0]
    server, _ = greeting_server(request_state_ttl=60)
    server.rounds_policy.signer.clock = lambda: now[0]
    async with raw(server) as rpc:
        state = await _first_state(rpc)
        now[0] += 61
        error = (await rpc("tools/call", _retry(state)))["error"]
        now[0] -= 2  # still within its 60 s: served
        result = (await rpc("tools/call", _retry(state)))["result"]
    assert error["code"] == -32602 and error["data"] == {"reason": "expired"}
    assert "expired" in error["message"]
    assert result["inputRequests"].keys() == {"sampling-2"}


async def test_input_responses_without_request_state_are_refused() -> None:
    server, runs = greeting_server()
    async with raw(server) as rpc:
        error = (
            await rpc("tools/call", call({"language": "fr"}, inputResponses={"elicitation-1": NAME_ANSWER}))
        )["error"]
    assert error["code"] == -32602
    assert "inputResponses without requestState" in error["message"]
    assert runs == []


async def test_a_malformed_answer_is_refused_and_a_missing_one_asked_again() -> None:
    server, _ = greeting_server()
    async with raw(server) as rpc:
        state = await _first_state(rpc)
        bad = (
            await rpc(
                "tools/call",
                call(
                    {"language": "fr"},
                    inputResponses={"elicitation-1": {"action": "maybe"}},
                    requestState=state,
                ),
            )
        )["error"]
        again = (await rpc("tools/call", call({"language": "fr"}, inputResponses={}, requestState=state)))[
            "result"
        ]
    assert bad["code"] == -32602
    assert "inputResponses['elicitation-1'] is not a valid ElicitResult" in bad["message"]
    # The spec: a missing answer is asked for again rather than refused.
    assert again["resultType"] == "input_required" and list(again["inputRequests"]) == ["elicitation-1"]


async def test_a_second_worker_with_the_same_key_serves_the_retry() -> None:
    key = secrets.token_bytes(32)
    first_worker, first_runs = greeting_server(request_state_key=key)
    second_worker, second_runs = greeting_server(request_state_key=key)
    stranger, _ = greeting_server(request_state_key=secrets.token_bytes(32))
    async with raw(first_worker) as one, raw(second_worker) as two, raw(stranger) as three:
        state = await _first_state(one)
        result = (await two("tools/call", _retry(state)))["result"]
        error = (await three("tools/call", _retry(state)))["error"]
    assert result["inputRequests"].keys() == {"sampling-2"}
    assert first_runs == ["fr"] and second_runs == ["fr"]
    assert error["code"] == -32602 and error["data"] == {"reason": "signature"}


@pytest.mark.parametrize(
    ("capabilities", "required"),
    [
        ({}, {"elicitation": {}}),
        ({"sampling": {}}, {"elicitation": {}}),
        ({"elicitation": {"url": {}}}, {"elicitation": {"form": {}}}),
    ],
)
async def test_a_capability_the_request_lacks_is_a_32021_error(
    capabilities: dict[str, Any], required: dict[str, Any]
) -> None:
    server, _ = greeting_server()
    async with raw(server) as rpc:
        params = {**call({"language": "fr"}), "_meta": meta(capabilities)}
        error = (await rpc("tools/call", params))["error"]
    assert error["code"] == -32021
    assert error["data"] == {"requiredCapabilities": required}


async def test_sampling_with_tools_needs_sampling_tools() -> None:
    server = Server("rounds", "1.0")

    @server.tool()
    async def plan(ctx: Context) -> str:
        params = sampling_params("plan")
        params.tools = [types.Tool(name="search", input_schema={"type": "object"})]
        await ctx.create_message(params)
        return "planned"

    async with raw(server) as rpc:
        params = {"_meta": meta({"sampling": {}}), "name": "plan", "arguments": {}}
        error = (await rpc("tools/call", params))["error"]
        params["_meta"] = meta({"sampling": {"tools": {}}})
        asked = (await rpc("tools/call", params))["result"]
    assert error["code"] == -32021 and error["data"] == {"requiredCapabilities": {"sampling": {"tools": {}}}}
    assert asked["inputRequests"]["sampling-1"]["params"]["tools"][0]["name"] == "search"


async def test_too_many_rounds_is_an_error() -> None:
    server = Server("rounds", "1.0", max_input_rounds=2)

    @server.tool()
    async def nag(ctx: Context) -> str:
        while True:  # never satisfied
            await elicit_form(ctx, "More?", Name)

    async with raw(server) as rpc:
        params: dict[str, Any] = {"_meta": meta(), "name": "nag", "arguments": {}}
        first = (await rpc("tools/call", params))["result"]
        second = (
            await rpc(
                "tools/call",
                {
                    **params,
                    "inputResponses": {"elicitation-1": NAME_ANSWER},
                    "requestState": first["requestState"],
                },
            )
        )["result"]
        assert list(second["inputRequests"]) == ["elicitation-2"]
        error = (
            await rpc(
                "tools/call",
                {
                    **params,
                    "inputResponses": {"elicitation-2": NAME_ANSWER},
                    "requestState": second["requestState"],
                },
            )
        )["error"]
    assert error["code"] == -32600
    assert "after 2 rounds" in error["message"] and "max_input_rounds=2" in error["message"]


async def test_prompts_get_and_resources_read_ask_too() -> None:
    server = Server("rounds", "1.0", cache=CacheHint(ttl_ms=60_000, scope="public"))

    @server.prompt()
    async def story(topic: str, ctx: Context) -> str:
        outcome = await elicit_form(ctx, "Whose story?", Name)
        return f"A story about {topic} for {outcome.value.name if outcome.value else 'nobody'}"

    @server.resource("test://roots")
    async def roots(ctx: Context) -> str:
        listed = await ctx.list_roots()
        return ", ".join(root.uri for root in listed.roots)

    @server.resource("test://plain")
    def plain() -> str:
        return "asks nothing"

    async with raw(server) as rpc:
        plain_read = (await rpc("resources/read", {"_meta": meta(), "uri": "test://plain"}))["result"]
        prompt_params: dict[str, Any] = {"_meta": meta(), "name": "story", "arguments": {"topic": "owls"}}
        first = (await rpc("prompts/get", prompt_params))["result"]
        assert first["resultType"] == "input_required"
        prompt = (
            await rpc(
                "prompts/get",
                {
                    **prompt_params,
                    "inputResponses": {"elicitation-1": NAME_ANSWER},
                    "requestState": first["requestState"],
                },
            )
        )["result"]

        read_params: dict[str, Any] = {"_meta": meta(), "uri": "test://roots"}
        asked = (await rpc("resources/read", read_params))["result"]
        roots_answer = {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]}
        read = (
            await rpc(
                "resources/read",
                {
                    **read_params,
                    "inputResponses": {"roots-1": roots_answer},
                    "requestState": asked["requestState"],
                },
            )
        )["result"]
    assert prompt["resultType"] == "complete"
    assert prompt["messages"][0]["content"]["text"] == "A story about owls for Ada"
    assert asked["resultType"] == "input_required"
    assert asked["inputRequests"] == {"roots-1": {"method": "roots/list", "params": {}}}
    assert "ttlMs" not in asked and "cacheScope" not in asked  # not a complete result: no hints
    # The retry's result depends on the answers: hints that say not to keep it.
    assert read["resultType"] == "complete" and read["ttlMs"] == 0 and read["cacheScope"] == "private"
    assert read["contents"][0]["text"] == "file:///a, file:///b"
    assert plain_read["ttlMs"] == 60_000 and plain_read["cacheScope"] == "public"


async def test_other_methods_may_not_ask() -> None:
    server = Server("rounds", "1.0")

    @server.on(types.methods.COMPLETION_COMPLETE)
    async def complete(params: types.CompleteRequestParams, ctx: Context) -> types.CompleteResult:
        await ctx.elicit(types.ElicitRequestFormParams(message="?", requested_schema=_schema()))
        return types.CompleteResult(completion=types.CompleteResultCompletion(values=[]))

    async with raw(server) as rpc:
        error = (
            await rpc(
                "completion/complete",
                {
                    "_meta": meta(),
                    "ref": {"type": "ref/prompt", "name": "p"},
                    "argument": {"name": "a", "value": "b"},
                },
            )
        )["error"]
    assert "only tools/call, prompts/get and resources/read may ask" in error["message"]


def _schema() -> types.ElicitRequestFormParamsRequestedSchema:
    return types.ElicitRequestFormParamsRequestedSchema(properties={"name": types.StringSchema()})


async def test_a_changed_question_is_asked_again_and_broad_excepts_do_not_swallow_the_round() -> None:
    server = Server("rounds", "1.0")
    questions = iter(["First?", "Changed?", "Changed?"])

    @server.tool()
    async def shifty(ctx: Context) -> str:
        try:
            answer = await ctx.elicit(
                types.ElicitRequestFormParams(message=next(questions), requested_schema=_schema())
            )
        except Exception as exc:  # a handler's catch-all does not catch the end of the round
            return f"caught {exc!r}"
        assert isinstance(answer, types.ElicitResult)
        return f"{answer.action} {answer.content}"

    async with raw(server) as rpc:
        params: dict[str, Any] = {"_meta": meta(), "name": "shifty", "arguments": {}}
        first = (await rpc("tools/call", params))["result"]
        # The retry's run asks another question: the answer to the first is not given to it.
        second = (
            await rpc(
                "tools/call",
                {
                    **params,
                    "inputResponses": {"elicitation-1": NAME_ANSWER},
                    "requestState": first["requestState"],
                },
            )
        )["result"]
        assert second["inputRequests"]["elicitation-1"]["params"]["message"] == "Changed?"
        third = (
            await rpc(
                "tools/call",
                {
                    **params,
                    "inputResponses": {"elicitation-1": NAME_ANSWER},
                    "requestState": second["requestState"],
                },
            )
        )["result"]
    assert third["content"] == [{"type": "text", "text": "accept {'name': 'Ada'}"}]


async def test_url_mode_elicitation_in_2026_has_no_id_and_no_completion_notice() -> None:
    server = Server("rounds", "1.0")
    authorized: list[bool] = []

    @server.tool()
    async def connect(ctx: Context) -> str:
        answer = await ctx.elicit(
            types.ElicitRequestURLParams(
                message="Sign in", url="https://example.com/auth", elicitation_id="e-1", mode="url"
            )
        )
        await notify_elicitation_complete(ctx, "e-1")  # nothing to send in 2026-07-28
        assert isinstance(answer, types.ElicitResult)
        return answer.action

    @server.tool()
    async def guarded(ctx: Context) -> str:
        if not authorized:
            raise URLElicitationRequiredError(
                [
                    types.ElicitRequestURLParams(
                        message="Authorize", url="https://example.com/a", elicitation_id="x"
                    )
                ]
            )
        return "in"

    async with raw(server) as rpc:
        params: dict[str, Any] = {"_meta": meta(), "name": "connect", "arguments": {}}
        first = (await rpc("tools/call", params))["result"]
        asked = first["inputRequests"]["elicitation-1"]
        assert asked == {
            "method": "elicitation/create",
            "params": {"message": "Sign in", "mode": "url", "url": "https://example.com/auth"},
        }
        done = (
            await rpc(
                "tools/call",
                {
                    **params,
                    "inputResponses": {"elicitation-1": {"action": "accept"}},
                    "requestState": first["requestState"],
                },
            )
        )["result"]
        assert done["content"] == [{"type": "text", "text": "accept"}]

        guarded_params: dict[str, Any] = {"_meta": meta(), "name": "guarded", "arguments": {}}
        required = (await rpc("tools/call", guarded_params))["result"]
        assert required["resultType"] == "input_required"
        assert required["inputRequests"] == {
            "url-elicitation-1": {
                "method": "elicitation/create",
                "params": {"message": "Authorize", "mode": "url", "url": "https://example.com/a"},
            }
        }
        no_url = await rpc("tools/call", {**guarded_params, "_meta": meta({"elicitation": {}})})
        authorized.append(True)  # the user completed it out of band
        retried = (
            await rpc(
                "tools/call",
                {
                    **guarded_params,
                    "inputResponses": {"url-elicitation-1": {"action": "accept"}},
                    "requestState": required["requestState"],
                },
            )
        )["result"]
    assert retried["content"] == [{"type": "text", "text": "in"}]
    assert no_url["error"]["code"] == -32021
    assert no_url["error"]["data"] == {"requiredCapabilities": {"elicitation": {"url": {}}}}


def test_the_signer_checks_its_key_and_binds_what_it_seals() -> None:
    with pytest.raises(ValueError, match="at least 32"):
        RequestStateSigner(b"short")
    with pytest.raises(ValueError, match="positive"):
        RequestStateSigner(None, ttl=0)
    with pytest.raises(ValueError, match="max_input_rounds"):
        Server("s", "1", max_input_rounds=0)
    signer = RequestStateSigner(secrets.token_bytes(32), clock=lambda: 100.0)
    state = RequestState("tools/call", "digest", "", 1, signer.expiry(), [])
    token = signer.seal(state)
    assert signer.open(token, "tools/call", "digest") == state
    with pytest.raises(McpError, match="another user") as refused:
        signer.open(token, "tools/call", "digest", "someone")
    assert refused.value.data == {"reason": "principal"}
    assert state.expires == 700


async def test_an_ask_from_a_task_of_the_handler_ends_the_round() -> None:
    server = Server("rounds", "1.0")

    @server.tool()
    async def busy(ctx: Context) -> str:
        names: list[str] = []
        async with anyio.create_task_group() as tg:

            async def ask() -> None:
                outcome = await elicit_form(ctx, "Name?", Name)
                names.append(outcome.value.name if outcome.value else "-")
                tg.cancel_scope.cancel()

            tg.start_soon(anyio.sleep_forever)  # cancelled when the ask ends the round
            tg.start_soon(ask)
        return ",".join(names)

    async with raw(server) as rpc:
        params: dict[str, Any] = {"_meta": meta(), "name": "busy", "arguments": {}}
        first = (await rpc("tools/call", params))["result"]
        assert list(first["inputRequests"]) == ["elicitation-1"]
        done = (
            await rpc(
                "tools/call",
                {
                    **params,
                    "inputResponses": {"elicitation-1": NAME_ANSWER},
                    "requestState": first["requestState"],
                },
            )
        )["result"]
    assert done["content"] == [{"type": "text", "text": "Ada"}]


async def test_a_request_state_is_bound_to_the_user_it_was_issued_to() -> None:
    user: contextvars.ContextVar[str] = contextvars.ContextVar("user")
    server, _ = greeting_server(request_state_principal=lambda ctx: user.get())
    # The server runs its handlers in copies of the context it was started in (as an ASGI
    # server in that of the HTTP request, where authentication would set who it is).
    user.set("alice")
    async with raw(server) as rpc:
        state = await _first_state(rpc)
    user.set("mallory")
    async with raw(server) as rpc:
        error = (await rpc("tools/call", _retry(state)))["error"]
    user.set("alice")
    async with raw(server) as rpc:
        result = (await rpc("tools/call", _retry(state)))["result"]
    assert error["code"] == -32602 and error["data"] == {"reason": "principal"}
    assert "another user" in error["message"]
    assert result["inputRequests"].keys() == {"sampling-2"}
