"""The per-request metadata of the stateless protocol (2026-07-28), read and written on its own:
what a request's ``_meta`` says, how a malformed one is refused, and a progress token added to
params of every kind."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from msgspec import UNSET

from mcpbind import types
from mcpbind.protocol.envelope import (
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    LOG_LEVEL,
    PROTOCOL_VERSION,
    envelope_meta,
    is_modern_meta,
    params_meta,
    read_envelope,
    with_progress_token,
)
from mcpbind.protocol.errors import INVALID_PARAMS, McpError

MODERN = "2026-07-28"
SUPPORTED = frozenset({MODERN})


def _refusal(meta: Any) -> str:
    with pytest.raises(McpError) as caught:
        read_envelope(meta, SUPPORTED, (MODERN,))
    assert caught.value.code == INVALID_PARAMS
    return caught.value.message


def test_the_meta_of_params_of_every_kind() -> None:
    struct = types.CallToolRequestParams(name="add", meta={"k": 1})
    assert params_meta(struct) == {"k": 1}
    assert params_meta(types.CallToolRequestParams(name="add")) is UNSET
    assert params_meta(object()) is UNSET  # params with no _meta member at all
    # Kept as received (a proxy's): only _meta is read.
    assert params_meta(msgspec.Raw(b'{"name":"add","_meta":{"k":[1]}}')) == {"k": [1]}
    for received in (b'{"name":"add"}', b'{"_meta":null}', b"[1]", b'{"_meta":'):
        assert params_meta(msgspec.Raw(received)) is UNSET, received


def test_a_meta_is_modern_when_it_names_a_version_or_capabilities() -> None:
    assert is_modern_meta({PROTOCOL_VERSION: MODERN})
    assert is_modern_meta({CLIENT_CAPABILITIES: {}})
    assert is_modern_meta({PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {}})
    assert not is_modern_meta({"progressToken": 1})
    assert not is_modern_meta(UNSET)


def test_what_a_request_says_about_itself() -> None:
    meta = {
        PROTOCOL_VERSION: MODERN,
        CLIENT_CAPABILITIES: {"sampling": {}, "extensions": {"io.x/a": {}, "io.x/b": {"v": 1}}},
        CLIENT_INFO: {"name": "c", "version": "1"},
        LOG_LEVEL: "notice",
    }
    envelope = read_envelope(meta, SUPPORTED, (MODERN,))
    assert envelope.version == MODERN
    assert envelope.client_capabilities == types.ClientCapabilities(
        sampling=types.ClientCapabilitiesSampling()
    )
    assert envelope.client_info == types.Implementation(name="c", version="1")
    assert envelope.log_level == "notice"
    assert set(envelope.extensions) == {"io.x/a", "io.x/b"}
    bare = read_envelope({PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {}}, SUPPORTED, (MODERN,))
    assert (bare.client_info, bare.log_level, set(bare.extensions)) == (None, None, set())
    odd = {PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {"extensions": ["io.x/a"]}}
    assert set(read_envelope(odd, SUPPORTED, (MODERN,)).extensions) == set()


def test_what_a_client_writes_reads_back() -> None:
    info = types.Implementation(name="c", version="1")
    assert envelope_meta(MODERN, {}) == {PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {}}
    written = envelope_meta(MODERN, types.ClientCapabilities(), info, "error")
    assert written == {
        PROTOCOL_VERSION: MODERN,
        CLIENT_CAPABILITIES: types.ClientCapabilities(),
        CLIENT_INFO: info,
        LOG_LEVEL: "error",
    }
    # Read as it was written, structs and all (in process, no JSON between).
    envelope = read_envelope(written, SUPPORTED, (MODERN,))
    assert (envelope.client_info, envelope.log_level, set(envelope.extensions)) == (info, "error", set())


def test_a_malformed_meta_is_refused_saying_what_is_wrong() -> None:
    assert _refusal(None) == (
        f"Invalid params: `params._meta` must carry {PROTOCOL_VERSION!r} and {CLIENT_CAPABILITIES!r}"
    )
    assert (
        _refusal({CLIENT_CAPABILITIES: {}})
        == f"Invalid params: `params._meta[{PROTOCOL_VERSION!r}]` is missing"
    )
    assert _refusal({PROTOCOL_VERSION: 5, CLIENT_CAPABILITIES: {}}) == (
        f"Invalid params: `params._meta[{PROTOCOL_VERSION!r}]` must be a string"
    )
    assert _refusal({PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {}, LOG_LEVEL: "loud"}) == (
        f"Invalid params: `params._meta[{LOG_LEVEL!r}]` must be one of "
        "debug, info, notice, warning, error, critical, alert, emergency"
    )


def test_a_progress_token_joins_what_params_already_carry() -> None:
    token = {"progressToken": 7}
    assert with_progress_token({"name": "add"}, 7) == {"name": "add", "_meta": token}
    assert with_progress_token({"name": "add", "_meta": {"k": 1}}, 7) == {
        "name": "add",
        "_meta": {"k": 1, "progressToken": 7},
    }
    assert with_progress_token({"_meta": None}, 7) == {"_meta": token}
    # Kept as received (a proxy's): decoded for it; absent params become an object.
    received = msgspec.Raw(b'{"name":"add","_meta":{"k":1}}')
    assert with_progress_token(received, "t") == {"name": "add", "_meta": {"k": 1, "progressToken": "t"}}
    assert with_progress_token(msgspec.Raw(b""), 7) == {"_meta": token}
    struct = types.CallToolRequestParams(name="add")
    assert with_progress_token(struct, 7) == types.CallToolRequestParams(name="add", meta=token)
    struct = types.CallToolRequestParams(name="add", meta={"k": 1})
    assert with_progress_token(struct, 7).meta == {"k": 1, "progressToken": 7}
