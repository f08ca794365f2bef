"""A codec's deferred request methods: read as if they were in its table, but their specs are
made (and the codec's decoders rebuilt) only when the first of them arrives; the server codec
defers the stateless-only methods, whose types are the newest schema's."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import msgspec
import pytest

from mcpbind import types
from mcpbind.protocol.methods import Direction, RequestSpec
from mcpbind.protocol.wire import Codec, DeferredRequests, TypedRequest, WireError
from tests.harness import child_env


class LateParams(msgspec.Struct, kw_only=True):
    word: str


def late_codec(loads: list[int]) -> Codec:
    def load() -> dict[str, RequestSpec[Any, Any, Any]]:
        loads.append(1)
        spec: RequestSpec[Any, Any, Any] = RequestSpec(
            "late/method", Direction.CLIENT_TO_SERVER, LateParams, dict, params_optional=False
        )
        return {"late/method": spec}

    return Codec(types.methods, "server", deferred=DeferredRequests(frozenset({"late/method"}), load))


def test_a_deferred_method_is_loaded_on_first_arrival_and_then_read_in_one_pass() -> None:
    loads: list[int] = []
    codec = late_codec(loads)
    assert loads == [] and "late/method" not in codec.incoming_requests
    for ident in (1, 2):
        message = codec.decode_typed(
            b'{"jsonrpc":"2.0","id":%d,"method":"late/method","params":{"word":"hi"}}' % ident
        )
        assert isinstance(message, TypedRequest) and message.method == "late/method"
        assert message.params == LateParams(word="hi") and message.id == ident
    assert loads == [1]
    assert codec.incoming_requests["late/method"].params_type is LateParams


def test_methods_neither_known_nor_deferred_are_still_not_found() -> None:
    loads: list[int] = []
    codec = late_codec(loads)
    with pytest.raises(WireError) as caught:
        codec.decode_typed(b'{"jsonrpc":"2.0","id":1,"method":"no/such","params":{}}')
    assert caught.value.code == -32601 and loads == []


def test_a_deferred_method_with_bad_params_is_invalid_params() -> None:
    codec = late_codec([])
    with pytest.raises(WireError) as caught:
        codec.decode_typed(b'{"jsonrpc":"2.0","id":1,"method":"late/method","params":{"word":1}}')
    assert caught.value.code == -32602


CHECK = """
import sys
from mcpbind.protocol.codecs import shared_codec
codec = shared_codec("server", None)
print("mcpbind.schema.v2026_07_28" in sys.modules)
message = codec.decode_typed(sys.argv[1].encode())
print("mcpbind.schema.v2026_07_28" in sys.modules, type(message.params).__name__)
"""


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("server/discover", '{"_meta":{}}'),
        ("subscriptions/listen", '{"_meta":{},"notifications":{"toolsListChanged":true,"taskIds":["t"]}}'),
    ],
)
def test_the_server_codec_loads_the_newest_schema_only_for_a_stateless_only_method(
    method: str, params: str
) -> None:
    data = f'{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{params}}}'
    run = subprocess.run(
        [sys.executable, "-c", CHECK, data], env=child_env(), capture_output=True, text=True, check=True
    )
    before, after = run.stdout.splitlines()
    assert before == "False"
    loaded, params_type = after.split()
    assert loaded == "True"
    assert params_type == ("ListenRequestParams" if method == "subscriptions/listen" else "RequestParams")
