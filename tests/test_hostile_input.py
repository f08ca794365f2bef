"""Hostile input to the codec: here, lines starting with ``[`` that are not JSON, which the
batch path let out as msgspec's DecodeError. They are a -32700 parse error, whether batches
are allowed in the version or not.
"""

from __future__ import annotations

import pytest

from mcpbind.errors import PARSE_ERROR
from mcpbind.schema import v2025_11_25 as types
from mcpbind.wire import Codec, WireError

methods = types.methods

SERVER = Codec.for_version("2025-11-25", "server")
CLIENT = Codec.for_version("2025-11-25", "client")
BATCHING_SERVER = Codec.for_version("2025-03-26", "server")


def decode_error(codec: Codec, data: bytes) -> WireError:
    """The WireError of both decoding paths (they must agree)."""
    errors = []
    for decode in (codec.decode, codec.decode_typed):
        with pytest.raises(WireError) as info:
            decode(data)
        errors.append(info.value)
    one, two = errors
    assert (one.code, one.id, one.response_id) == (two.code, two.id, two.response_id)
    return one


# -- the codec: a batch that is not JSON (item 15) -----------------------------------------


@pytest.mark.parametrize("data", [b"[", b"[1,", b" [ ", b'[{"jsonrpc":', b"[{]", b"[1] x"])
def test_a_line_starting_with_a_bracket_that_is_not_json_is_a_parse_error(data: bytes) -> None:
    for codec in (SERVER, BATCHING_SERVER, CLIENT):
        error = decode_error(codec, data)
        assert (error.code, error.id) == (PARSE_ERROR, None)
        assert error.message.startswith("Parse error: ")
