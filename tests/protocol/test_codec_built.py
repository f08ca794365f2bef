"""What a codec's construction decides, on codecs each test builds itself (``Codec(...)``, not the
shared ``Codec.for_version``, whose cache may hold one built before the test): which methods each
role reads, the batching override, the per-method classes of the one-pass decode, and the tables
after a deferred method loads."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from mcpbind.protocol.errors import INVALID_REQUEST, METHOD_NOT_FOUND
from mcpbind.protocol.jsonrpc import Request, WireError
from mcpbind.protocol.methods import Direction, RequestSpec
from mcpbind.protocol.wire import Codec, DeferredRequests, TypedNotification, TypedRequest
from mcpbind.schema import load
from mcpbind.schema.v2025_11_25 import ElicitRequestFormParams
from tests.protocol.codec_calls import count_two_stage_calls

NEWER = load("2025-11-25").methods
BATCHING_VERSION = load("2025-03-26").methods
BATCH = b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]'
SAMPLING = (
    b'{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"maxTokens":5,'
    b'"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}}'
)
LIST_CHANGED = b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'


def _error(codec: Codec, data: bytes) -> WireError:
    with pytest.raises(WireError) as info:
        codec.decode_typed(data)
    return info.value


def test_each_role_reads_what_the_other_side_sends_and_nothing_else() -> None:
    client, server = Codec(NEWER, "client"), Codec(NEWER, "server")
    request = client.decode_typed(SAMPLING)
    assert isinstance(request, TypedRequest) and request.params.max_tokens == 5
    assert isinstance(client.decode_typed(LIST_CHANGED), TypedNotification)
    # The server's codec: a request only a server sends is no method of its.
    refused = _error(server, SAMPLING)
    assert (refused.code, refused.message, refused.id) == (
        METHOD_NOT_FOUND,
        "Method not found: sampling/createMessage",
        3,
    )
    assert _error(server, LIST_CHANGED).code == METHOD_NOT_FOUND
    assert "sampling/createMessage" not in server.incoming_requests
    assert "notifications/tools/list_changed" not in server.incoming_notifications


def test_the_shared_codec_of_a_version_is_built_for_the_role_asked() -> None:
    client = Codec.for_version("2025-11-25", "client")
    assert client.role == "client" and client is Codec.for_version("2025-11-25", "client")
    assert isinstance(client.decode_typed(SAMPLING), TypedRequest)
    assert _error(Codec.for_version("2025-11-25", "server"), SAMPLING).code == METHOD_NOT_FOUND


def test_batching_follows_the_version_unless_the_codec_is_told_otherwise() -> None:
    decoded = Codec(BATCHING_VERSION, "server").decode(BATCH)
    assert isinstance(decoded, list) and isinstance(decoded[0], Request)
    assert isinstance(Codec(NEWER, "server", batching=True).decode(BATCH), list)
    with pytest.raises(WireError) as refused:
        Codec(BATCHING_VERSION, "server", batching=False).decode(BATCH)
    assert refused.value.code == INVALID_REQUEST
    with pytest.raises(WireError):
        Codec(NEWER, "server").decode(BATCH)


@pytest.mark.parametrize(
    ("data", "ident"),
    [
        (b'{"jsonrpc":"2.0","id":4,"method":"ping","result":{}}', 4),
        (b'{"jsonrpc":"2.0","id":4,"method":"ping","error":{"code":1,"message":"m"}}', 4),
        (b'{"jsonrpc":"2.0","method":"notifications/initialized","result":{}}', None),
        (b'{"jsonrpc":"2.0","method":"notifications/initialized","error":{"code":1,"message":"m"}}', None),
    ],
    ids=["request-result", "request-error", "notification-result", "notification-error"],
)
def test_a_new_codecs_one_pass_does_not_accept_a_method_with_an_outcome(data: bytes, ident: object) -> None:
    error = _error(Codec(NEWER, "server"), data)
    assert (error.code, error.id) == (INVALID_REQUEST, ident)


def test_typed_messages_are_frozen_and_say_where_their_class_is_from() -> None:
    codec = Codec(NEWER, "server")
    request = codec.decode_typed(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}')
    note = codec.decode_typed(
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}'
    )
    for message in (request, note):
        assert isinstance(message, TypedRequest | TypedNotification)
        assert type(message).__module__ == "mcpbind.protocol.wire"
        with pytest.raises(AttributeError):
            message.params = None  # type: ignore[misc]


def test_messages_read_in_two_stages_are_as_typed_as_the_one_pass() -> None:
    """A batch member takes the two-stage path: its typed message has the same members."""
    codec = Codec(BATCHING_VERSION, "server")
    decoded = codec.decode_typed(
        b'[{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"t","arguments":{"x":1}}},'
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"late"}}]'
    )
    assert isinstance(decoded, list)
    request, note = decoded
    assert isinstance(request, TypedRequest) and isinstance(note, TypedNotification)
    assert msgspec.structs.asdict(request)["jsonrpc"] == "2.0"
    assert (request.id, request.method) == (9, "tools/call")
    assert (request.params.name, request.params.arguments) == ("t", {"x": 1})
    assert msgspec.structs.asdict(note)["jsonrpc"] == "2.0"
    assert note.method == "notifications/cancelled"
    assert (note.params.request_id, note.params.reason) == (9, "late")


def test_the_one_pass_reads_absent_optional_params_and_content_only_the_hook_knows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Messages that decode to the same either way, but only the one pass is cheap: a request and
    a notification whose optional params are absent, and an elicitation request, whose params are
    an untagged union (form or URL) that only the decode hook resolves."""
    server, client = Codec(NEWER, "server"), Codec(NEWER, "client")
    server_calls = count_two_stage_calls(server, monkeypatch)
    client_calls = count_two_stage_calls(client, monkeypatch)
    assert isinstance(server.decode_typed(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'), TypedRequest)
    assert isinstance(
        server.decode_typed(b'{"jsonrpc":"2.0","method":"notifications/initialized"}'), TypedNotification
    )
    request = client.decode_typed(
        b'{"jsonrpc":"2.0","id":4,"method":"elicitation/create","params":{"message":"Name?",'
        b'"requestedSchema":{"type":"object","properties":{"n":{"type":"string"}}}}}'
    )
    assert isinstance(request, TypedRequest)
    assert isinstance(request.params, ElicitRequestFormParams) and request.params.message == "Name?"
    assert server_calls == [] and client_calls == []


class LateParams(msgspec.Struct, kw_only=True):
    word: str


def test_loading_a_deferred_method_keeps_everything_else_the_codec_read() -> None:
    def load_late() -> dict[str, RequestSpec[Any, Any, Any]]:
        spec: RequestSpec[Any, Any, Any] = RequestSpec(
            "late/method", Direction.CLIENT_TO_SERVER, LateParams, dict, params_optional=False
        )
        return {"late/method": spec}

    # A version with batches: a batch's members take the two-stage path, whose tables the load
    # replaced too.
    codec = Codec(
        BATCHING_VERSION, "server", deferred=DeferredRequests(frozenset({"late/method"}), load_late)
    )
    late = codec.decode_typed(b'{"jsonrpc":"2.0","id":1,"method":"late/method","params":{"word":"w"}}')
    assert isinstance(late, TypedRequest) and late.params.word == "w"
    assert {"late/method", "tools/call", "initialize"} <= set(codec.requests)
    note = codec.decode_typed(
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}'
    )
    assert isinstance(note, TypedNotification) and note.params.request_id == 1
    batch = codec.decode_typed(
        b'[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}},'
        b'{"jsonrpc":"2.0","id":3,"method":"late/method","params":{"word":"v"}}]'
    )
    assert isinstance(batch, list)
    assert isinstance(batch[0], TypedNotification) and batch[0].params.request_id == 1
    assert isinstance(batch[1], TypedRequest) and batch[1].params.word == "v"
    unknown = _error(codec, b'{"jsonrpc":"2.0","id":2,"method":"other/method"}')
    assert (unknown.code, unknown.message) == (METHOD_NOT_FOUND, "Method not found: other/method")
