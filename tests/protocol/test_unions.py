"""The decoding policy for what msgspec cannot decode alone (mcpbind.protocol.unions): untagged
unions resolved to the member that fits, content blocks of unknown types kept whole. Bytes in,
no event loop."""

from __future__ import annotations

from typing import Any, Literal

import msgspec
import pytest

from mcpbind import types
from mcpbind.protocol.unions import TypedDecoder, UnknownContent, convert, dec_hook, decode, resolved_union


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


# -- members that are not structs, the key fast path, discriminators ----------------------------


class _Text(msgspec.Struct):
    text: str


class _Blob(msgspec.Struct):
    blob: str


class _Done(msgspec.Struct, rename="camel"):
    result_type: str = "complete"
    count: int = 0


class _Input(msgspec.Struct, rename="camel"):
    result_type: str
    input_requests: list[int]


_TEXT_OR_BLOB = resolved_union("TextOrBlob", lambda: (_Text, _Blob))
_MIXED = resolved_union("Mixed", lambda: (_Short, int, None, Literal["x", "y"], _TEXT_OR_BLOB))
_RESULT = resolved_union(
    "Result", lambda: (_Done, _Input), discriminator=("resultType", {"input_required": "_Input"})
)


def _holder(union: Any) -> Any:
    return msgspec.defstruct("Holder", [("value", union)])


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"3", 3),
        (b"null", None),
        (b'"y"', "y"),
        (b'{"x":1}', _Short(x=1)),
        (b'{"text":"t"}', _Text(text="t")),  # through the union inside the union
    ],
)
def test_members_that_are_not_structs(data: bytes, expected: Any) -> None:
    assert decode(b'{"value":' + data + b"}", _holder(_MIXED)).value == expected


def test_a_value_no_member_takes_names_each_members_reason() -> None:
    with pytest.raises(msgspec.ValidationError) as info:
        decode(b'{"value":"z"}', _holder(_MIXED))
    message = str(info.value)
    assert message.startswith("Object matches no member of Mixed (")
    for reason in (
        "_Short: Expected `object`, got `str`",
        "int: Expected `int`, got `str`",
        "None: Expected `null`, got `str`",
        "Invalid enum value 'z'",
        "TextOrBlob: Object matches no member of TextOrBlob (",
    ):
        assert reason in message, message


@pytest.mark.parametrize(
    ("data", "kind"), [(b"[1]", "array"), (b'"s"', "str"), (b"null", "null"), (b"1.5", "float")]
)
def test_a_value_that_is_no_object_where_only_structs_fit(data: bytes, kind: str) -> None:
    with pytest.raises(msgspec.ValidationError) as info:
        decode(b'{"value":' + data + b"}", _holder(_TEXT_OR_BLOB))
    assert f"_Text: Expected `object`, got `{kind}`; _Blob: Expected `object`, got `{kind}`" in str(
        info.value
    )


def test_the_union_marker_answers_isinstance_for_its_members() -> None:
    assert all(isinstance(value, _MIXED) for value in (3, None, "x", _Short(x=1), _Text(text="t")))
    assert not any(isinstance(value, _MIXED) for value in ("z", 2.5, [1], _Done()))


def test_a_key_only_one_member_knows_decides_and_a_bad_value_is_still_reported() -> None:
    holder = _holder(_TEXT_OR_BLOB)
    assert decode(b'{"value":{"blob":"b"}}', holder).value == _Blob(blob="b")
    assert decode(b'{"value":{"text":"a","blob":"b"}}', holder).value == _Text(text="a")
    with pytest.raises(msgspec.ValidationError) as info:
        decode(b'{"value":{"text":5}}', holder)
    message = str(info.value)
    assert "_Text: Expected `str`, got `int` - at `$.text`" in message
    assert "_Blob: Object missing required field `blob`" in message


def test_a_discriminator_value_decides_the_member() -> None:
    holder = _holder(_RESULT)
    wanted = decode(b'{"value":{"resultType":"input_required","inputRequests":[1]}}', holder)
    assert wanted.value == _Input(result_type="input_required", input_requests=[1])
    # Any other value: the members not named (even with the named member's keys present).
    other = decode(b'{"value":{"resultType":"other","count":2,"inputRequests":[1]}}', holder)
    assert other.value == _Done(result_type="other", count=2)
    with pytest.raises(msgspec.ValidationError) as info:
        decode(b'{"value":{"resultType":"input_required","count":1}}', holder)
    assert "_Input: Object missing required field `inputRequests`" in str(info.value)
    assert "_Done" not in str(info.value)


def test_dec_hook_refuses_types_that_are_not_union_markers() -> None:
    with pytest.raises(NotImplementedError, match="cannot decode values of type <class 'complex'>"):
        dec_hook(complex, 1)
    with pytest.raises(msgspec.ValidationError, match=r"Expected `array`, got `int` - at `\$.content`"):
        convert({"content": 3}, types.CallToolResult)


def test_an_unknown_content_type_under_a_map_key_is_an_error() -> None:
    # msgspec does not say which key held it, so the block cannot be set aside: the error stands.
    box: Any = msgspec.defstruct("Box", [("blocks", dict[str, types.ContentBlock])])
    with pytest.raises(
        msgspec.ValidationError, match=r"Invalid value 'hologram' - at `\$.blocks\[...\].type`"
    ):
        decode(b'{"blocks":{"a":{"type":"hologram"}}}', box)
    assert decode(b'{"blocks":{"a":{"type":"text","text":"t"}}}', box).blocks == {
        "a": types.TextContent(text="t")
    }


def test_unknown_content_shows_itself_and_a_type_that_is_no_string() -> None:
    block = UnknownContent({"type": 3, "x": 1})
    assert repr(block) == "UnknownContent({'type': 3, 'x': 1})"
    assert block.type == ""
