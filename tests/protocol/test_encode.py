"""The encoders' own rules, byte for byte: absent params stay absent, a batch is a JSON array of the
messages as given, and a rejected message's error keeps its data."""

from __future__ import annotations

import json
from typing import Any

import pytest
from msgspec import Raw

from mcpbind.protocol.encode import encode_batch, encode_notification, encode_request, encode_wire_error
from mcpbind.protocol.jsonrpc import WireError


def test_a_request_whose_params_were_absent_is_sent_without_them() -> None:
    # An empty Raw is what a forwarded message carries when it had no params: no "params" member,
    # not "params": null and not a broken document.
    assert encode_request(7, "ping", Raw(b"")) == b'{"jsonrpc":"2.0","id":7,"method":"ping"}'


def test_a_notification_whose_params_were_absent_is_sent_without_them() -> None:
    assert encode_notification("notifications/initialized", Raw(b"")) == (
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
    )


@pytest.mark.parametrize(
    "params",
    [Raw(b'{"uri":"file:///a"}'), {}, {"uri": "file:///a"}],
    ids=["raw", "empty-object", "object"],
)
def test_params_that_were_given_are_kept_even_when_empty(params: Any) -> None:
    expected = params if not isinstance(params, Raw) else json.loads(bytes(params))
    assert json.loads(encode_request(1, "resources/read", params))["params"] == expected
    assert json.loads(encode_notification("notifications/resources/updated", params))["params"] == expected


def test_a_batch_is_the_messages_in_a_json_array_in_their_order() -> None:
    first = encode_request(1, "ping")
    second = encode_notification("notifications/initialized")
    assert encode_batch([first, second]) == b"[" + first + b"," + second + b"]"
    assert json.loads(encode_batch([first, second])) == [json.loads(first), json.loads(second)]
    assert encode_batch([]) == b"[]"


def test_a_wire_errors_data_reaches_the_peer() -> None:
    error = WireError(-32602, "Invalid params", 4, {"field": "uri"})
    assert error.data == {"field": "uri"}
    assert json.loads(encode_wire_error(error)) == {
        "jsonrpc": "2.0",
        "id": 4,
        "error": {"code": -32602, "message": "Invalid params", "data": {"field": "uri"}},
    }
