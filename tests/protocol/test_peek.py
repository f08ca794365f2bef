"""What a transport reads of a message without decoding it (mcpbind.protocol.peek): its id and
method, and so whether it is a request, a notification or a response. Bytes in, no event loop."""

from __future__ import annotations

import re

import msgspec
import pytest
from msgspec import UNSET

from mcpbind.protocol.peek import Peeked, peek


@pytest.mark.parametrize(
    ("data", "id", "method", "kind"),
    [
        (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}', 1, "tools/call", "request"),
        (b'{"jsonrpc":"2.0","id":"a-1","method":"ping"}', "a-1", "ping", "request"),
        (
            b'{"jsonrpc":"2.0","method":"notifications/progress","params":{}}',
            UNSET,
            "notifications/progress",
            "notification",
        ),
        (b'{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}', 7, UNSET, "response"),
        (
            b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
            None,
            UNSET,
            "response",
        ),
        # A request with a null id is none of the three (the codec refuses it).
        (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', None, "ping", None),
        (b"{}", UNSET, UNSET, None),
    ],
)
def test_the_id_and_method_say_what_a_message_is(
    data: bytes, id: int | str | None, method: object, kind: str | None
) -> None:
    peeked = peek(data)
    assert (peeked.id, peeked.method) == (id, method)
    flags = {
        "request": peeked.is_request,
        "notification": peeked.is_notification,
        "response": peeked.is_response,
    }
    assert [name for name, flag in flags.items() if flag] == ([kind] if kind else [])


def test_only_top_level_members_are_read() -> None:
    # An "id" or "method" inside params or result is not the message's.
    peeked = peek(b'{"params":{"id":5,"method":"x","a":[{"id":6}]},"id":2,"method":"tools/call"}')
    assert peeked == Peeked(id=2, method="tools/call")
    assert peek(b'{"result":{"id":9,"method":"y"},"id":3}') == Peeked(id=3)


@pytest.mark.parametrize(
    ("data", "error", "text"),
    [
        (b"[1]", msgspec.ValidationError, "Expected `object`, got `array`"),
        (b'{"id":1.5}', msgspec.ValidationError, "`$.id`"),
        (b'{"method":3}', msgspec.ValidationError, "`$.method`"),
        (b"nope", msgspec.DecodeError, "malformed"),
        (b'{"id":1,', msgspec.DecodeError, "truncated"),
    ],
)
def test_what_is_no_message_raises(data: bytes, error: type[Exception], text: str) -> None:
    with pytest.raises(error, match=re.escape(text)):
        peek(data)
