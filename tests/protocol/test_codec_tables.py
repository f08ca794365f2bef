"""The codecs the connections share (:func:`~mcpbind.protocol.codecs.shared_codec`): one per
role and batching rule, what each side reads, and the request methods whose params a proxy
keeps as received (``raw_params``)."""

from __future__ import annotations

import msgspec

from mcpbind import types
from mcpbind.protocol.codecs import shared_codec
from mcpbind.protocol.wire import Codec, Response, TypedNotification, TypedRequest

methods = types.methods


def _params(codec: Codec, method: str, params: bytes | None = None) -> object:
    data = b'{"jsonrpc":"2.0","id":1,"method":"' + method.encode() + b'"'
    data += b"}" if params is None else b',"params":' + params + b"}"
    message = codec.decode_typed(data)
    assert isinstance(message, TypedRequest), message
    return message.params


def test_one_codec_per_role_and_batching_rule() -> None:
    # None stands for the canonical version's rule: the very same codec as when it is given.
    assert shared_codec("server", None) is shared_codec("server", methods.BATCHING)
    assert shared_codec("server", None) is not shared_codec("server", not methods.BATCHING)
    assert shared_codec("client", None) is not shared_codec("server", None)


def test_raw_params_are_kept_as_received_for_their_methods_only() -> None:
    # (A method the table lacks is no harm.)
    codec = shared_codec("server", None, frozenset({"tools/call", "no/such/method"}))
    params = _params(codec, "tools/call", b'{"name":7, "extra":[1]}')  # not checked against the type
    assert type(params) is msgspec.Raw and bytes(params) == b'{"name":7, "extra":[1]}'
    assert type(_params(codec, "tools/call")) is msgspec.Raw  # params may be absent
    assert type(_params(codec, "tools/list", b"{}")) is types.PaginatedRequestParams
    # The result of a request sent on keeps its type.
    response = codec.decode_one(b'{"jsonrpc":"2.0","id":1,"result":{"content":[]}}')
    assert isinstance(response, Response)
    assert codec.result(codec.requests["tools/call"], response) == types.CallToolResult(content=[])
    # Without raw_params, the same request is typed.
    typed = _params(shared_codec("server", None), "tools/call", b'{"name":"add"}')
    assert typed == types.CallToolRequestParams(name="add")


def test_raw_params_of_a_stateless_only_method_and_on_the_client_side() -> None:
    server = shared_codec("server", None, frozenset({"server/discover"}))
    assert type(_params(server, "server/discover", b'{"_meta":{}}')) is msgspec.Raw
    client = shared_codec("client", None, frozenset({"sampling/createMessage"}))
    assert type(_params(client, "sampling/createMessage", b'{"messages":[]}')) is msgspec.Raw
    assert type(_params(client, "ping")) is types.RequestParams


def test_a_client_reads_notifications_in_the_handler_facing_types() -> None:
    # Only what the handler-facing version lacks is read in the newest version's types.
    codec = shared_codec("client", None)
    message = codec.decode_typed(
        b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}'
    )
    assert isinstance(message, TypedNotification)
    assert type(message.params) is types.ProgressNotificationParams
