"""Image and Audio: MIME types from bytes, suffixes or the caller, and what tools, prompts and
resources send for them."""

from __future__ import annotations

import base64
import io
import wave
from pathlib import Path

import pytest
from typing_extensions import assert_type

from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.media import Audio, Image
from mcpbind.server.prompts import assistant_message, user_message
from mcpbind.server.server import Server
from tests.harness import connected

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="
)


def make_wav() -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as sound:
        sound.setnchannels(1)
        sound.setsampwidth(2)
        sound.setframerate(8000)
        sound.writeframes(b"\x00\x00" * 80)
    return out.getvalue()


WAV = make_wav()


@pytest.mark.parametrize(
    ("data", "mime_type"),
    [
        (PNG, "image/png"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "image/jpeg"),
        (b"GIF89a\x01\x00\x01\x00", "image/gif"),
        (b"RIFF\x24\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"\x00\x00\x00\x1cftypavif\x00\x00\x00\x00", "image/avif"),
        (b"BM\x3a\x00\x00\x00", "image/bmp"),
        (b"II*\x00\x08\x00\x00\x00", "image/tiff"),
    ],
)
def test_image_type_from_its_bytes(data: bytes, mime_type: str) -> None:
    image = Image(data)
    assert image.mime_type == mime_type
    block = image.to_content()
    assert block == types.ImageContent(data=base64.b64encode(data).decode(), mime_type=mime_type)
    assert base64.b64decode(block.data) == data


@pytest.mark.parametrize(
    ("data", "mime_type"),
    [
        (WAV, "audio/wav"),
        (b"ID3\x04\x00\x00\x00\x00\x00\x00", "audio/mpeg"),
        (b"\xff\xfb\x90\x64\x00", "audio/mpeg"),  # an MPEG-1 layer III frame, no ID3 tag
        (b"\xff\xf1\x50\x80\x02\x1f\xfc", "audio/aac"),  # an ADTS frame
        (b"fLaC\x00\x00\x00\x22", "audio/flac"),
        (b"OggS\x00\x02\x00\x00", "audio/ogg"),
        (b"\x00\x00\x00\x20ftypM4A \x00\x00\x00\x00", "audio/mp4"),
        (b"FORM\x00\x00\x00\x1eAIFFCOMM", "audio/aiff"),
    ],
)
def test_audio_type_from_its_bytes(data: bytes, mime_type: str) -> None:
    audio = Audio(data)
    assert audio.mime_type == mime_type
    assert audio.to_content() == types.AudioContent(data=base64.b64encode(data).decode(), mime_type=mime_type)


def test_type_from_the_path_and_the_caller(tmp_path: Path) -> None:
    svg = tmp_path / "logo.SVG"
    svg.write_text('<svg xmlns="http://www.w3.org/2000/svg"/>')
    from_path = Image(path=svg)
    assert from_path.mime_type == "image/svg+xml" and from_path.data == svg.read_bytes()
    assert from_path.path == svg
    # The bytes tell the truth when a suffix lies.
    misnamed = tmp_path / "photo.jpg"
    misnamed.write_bytes(PNG)
    assert Image(path=str(misnamed)).mime_type == "image/png"
    # An explicit type wins over both.
    assert Image(PNG, mime_type="image/x-custom").mime_type == "image/x-custom"
    assert Audio(b"raw samples", mime_type="audio/L16").mime_type == "audio/L16"
    opus = tmp_path / "voice.opus"
    opus.write_bytes(b"\x01\x02")
    assert Audio(path=opus).mime_type == "audio/ogg"
    annotated = Image(PNG, annotations=types.Annotations(audience=["user"]), meta={"k": 1}).to_content()
    assert annotated.annotations == types.Annotations(audience=["user"]) and annotated.meta == {"k": 1}


def test_bad_input_gets_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not both and not neither"):
        Image()
    with pytest.raises(ValueError, match="not both and not neither"):
        Audio(WAV, path=tmp_path / "a.wav")
    with pytest.raises(TypeError, match="pass path="):
        Image("chart.png")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cannot tell the image type; pass mime_type="):
        Image(b"not an image")
    with pytest.raises(ValueError, match="cannot tell the audio type"):
        Audio(PNG)  # an image is not audio, whatever the caller thought
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(ValueError, match=r"cannot tell the image type of .*notes\.txt"):
        Image(path=text)
    with pytest.raises(FileNotFoundError):
        Image(path=tmp_path / "missing.png")


def test_equality_and_repr(tmp_path: Path) -> None:
    assert Image(PNG) == Image(PNG)
    assert Image(PNG) != Image(PNG, mime_type="image/apng")
    assert Image(WAV, mime_type="audio/wav") != Audio(WAV)
    assert repr(Audio(WAV)) == f"Audio(<{len(WAV)} bytes>, mime_type='audio/wav')"


server = Server("media", "1")


@server.tool()
def chart() -> Image:
    """A chart."""
    return Image(PNG)


@server.tool()
async def speak(text: str) -> list[str | Audio]:
    return [f"saying {text}", Audio(WAV)]


@server.tool()
def maybe_picture(found: bool) -> Image | None:
    return Image(PNG) if found else None


@server.tool()
def broken_picture(path: str) -> Image:
    return Image(path=path)


@server.prompt()
def describe(what: str) -> list[object]:
    return [f"Describe this {what}.", Image(PNG), assistant_message(Audio(WAV))]


@server.prompt()
def listen() -> Audio:
    return Audio(WAV)


@server.resource("media://logo")
def logo() -> Image:
    return Image(PNG)


def test_decorated_functions_keep_their_types() -> None:
    # Checked by mypy --strict: the decorators return the functions unchanged.
    assert_type(chart(), Image)
    assert_type(maybe_picture(False), Image | None)
    assert_type(listen(), Audio)
    assert chart() == Image(PNG)


def test_message_helpers() -> None:
    assert user_message("hi") == types.PromptMessage(role="user", content=types.TextContent(text="hi"))
    assert assistant_message(Image(PNG)) == types.PromptMessage(
        role="assistant", content=Image(PNG).to_content()
    )
    link = types.ResourceLink(uri="media://logo", name="logo")
    assert user_message(link).content is link
    with pytest.raises(TypeError, match="not int"):
        user_message(3)  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_tools_send_media_as_blocks() -> None:
    async with connected(server) as client:
        tools = {tool.name: tool for tool in await client.all_tools()}
        # Media is content for the model, not structured output: no outputSchema.
        for name in ("chart", "speak", "maybe_picture", "broken_picture"):
            assert tools[name].output_schema is types.UNSET, name
        png = base64.b64encode(PNG).decode()
        wav = base64.b64encode(WAV).decode()
        result = await client.call_tool("chart")
        assert result.content == [types.ImageContent(data=png, mime_type="image/png")]
        assert result.structured_content is types.UNSET and result.is_error is not True
        mixed = await client.call_tool("speak", {"text": "hi"})
        assert mixed.content == [
            types.TextContent(text="saying hi"),
            types.AudioContent(data=wav, mime_type="audio/wav"),
        ]
        assert (await client.call_tool("maybe_picture", {"found": False})).content == []
        failed = await client.call_tool("broken_picture", {"path": "/nonexistent/picture.png"})
        assert failed.is_error is True
        assert isinstance(failed.content[0], types.TextContent)
        assert "Error in tool broken_picture" in failed.content[0].text


@pytest.mark.anyio
async def test_prompts_and_resources_send_media() -> None:
    png = base64.b64encode(PNG).decode()
    wav = base64.b64encode(WAV).decode()
    async with connected(server) as client:
        got = await client.get_prompt("describe", {"what": "logo"})
        assert got.messages == [
            types.PromptMessage(role="user", content=types.TextContent(text="Describe this logo.")),
            types.PromptMessage(role="user", content=types.ImageContent(data=png, mime_type="image/png")),
            types.PromptMessage(
                role="assistant", content=types.AudioContent(data=wav, mime_type="audio/wav")
            ),
        ]
        alone = await client.get_prompt("listen")
        assert alone.messages == [
            types.PromptMessage(role="user", content=types.AudioContent(data=wav, mime_type="audio/wav"))
        ]
        read = await client.read_resource("media://logo")
        assert read.contents == [
            types.BlobResourceContents(uri="media://logo", blob=png, mime_type="image/png")
        ]
