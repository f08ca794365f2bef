"""The decoding policy for what msgspec cannot decode alone (mcpbind.protocol.unions): untagged
unions resolved to the member that fits, content blocks of unknown types kept whole. Bytes in,
no event loop."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from mcpbind import types
from mcpbind.protocol.unions import TypedDecoder, UnknownContent, convert, decode, resolved_union


def test_an_untagged_union_decodes_to_the_member_whose_required_keys_are_there() -> None:
    text = decode(b'{"type":"resource","resource":{"uri":"a:1","text":"hi"}}', types.EmbeddedResource)
    assert text.resource == types.TextResourceContents(uri="a:1", text="hi")
    blob = decode(b'{"type":"resource","resource":{"uri":"a:1","blob":"aGk="}}', types.EmbeddedResource)
    assert blob.resource == types.BlobResourceContents(uri="a:1", blob="aGk=")


def test_no_member_fitting_is_an_error_that_says_why_for_each() -> None:
    with pytest.raises(msgspec.ValidationError) as info:
        decode(b'{"type":"resource","resource":{"uri":"a:1"}}', types.EmbeddedResource)
    message = str(info.value)
    assert "matches no member of TextResourceContentsOrBlobResourceContents" in message
    assert "TextResourceContents: Object missing required field `text`" in message
    assert "BlobResourceContents: Object missing required field `blob`" in message
    assert message.endswith("- at `$.resource`")


class _Short(msgspec.Struct):
    x: int


class _Long(msgspec.Struct):
    x: int
    y: int = 0


_EITHER = resolved_union("ShortOrLong", lambda: (_Short, _Long))
_HOLDER: Any = msgspec.defstruct("Holder", [("value", _EITHER)])


def test_the_member_knowing_most_of_the_keys_wins_and_ties_go_to_the_first() -> None:
    assert decode(b'{"value":{"x":1,"y":2}}', _HOLDER).value == _Long(x=1, y=2)
    assert decode(b'{"value":{"x":1}}', _HOLDER).value == _Short(x=1)


def test_a_content_block_of_an_unknown_type_is_kept_whole() -> None:
    data = b'{"content":[{"type":"text","text":"a"},{"type":"hologram","depth":3,"frames":[1,2]}]}'
    result = decode(data, types.CallToolResult)
    assert result.content[0] == types.TextContent(text="a")
    block = result.content[1]
    assert isinstance(block, UnknownContent)
    assert block.type == "hologram" and block == {"type": "hologram", "depth": 3, "frames": [1, 2]}
    assert msgspec.json.encode(result) == data


def test_an_unknown_tag_outside_content_is_still_an_error() -> None:
    data = b'{"ref":{"type":"ref/nothing"},"argument":{"name":"a","value":"b"}}'
    with pytest.raises(msgspec.ValidationError, match=r"Invalid value 'ref/nothing' - at `\$.ref.type`"):
        decode(data, types.CompleteRequestParams)


def test_convert_and_a_typed_decoder_follow_the_same_policy() -> None:
    builtins = {"content": [{"type": "hologram"}], "isError": True}
    converted = convert(builtins, types.CallToolResult)
    assert converted.content == [UnknownContent({"type": "hologram"})] and converted.is_error is True
    decoder: TypedDecoder[types.CallToolResult] = TypedDecoder(types.CallToolResult)
    assert decoder.decode(msgspec.json.encode(builtins)) == converted


def test_plain_msgspec_says_to_decode_through_this_module() -> None:
    with pytest.raises(msgspec.ValidationError, match=r"decode with mcpbind\.protocol\.unions\.decode"):
        msgspec.json.decode(
            b'{"type":"resource","resource":{"uri":"a:1","text":"hi"}}', type=types.EmbeddedResource
        )
