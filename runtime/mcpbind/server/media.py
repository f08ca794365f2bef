"""Images and audio that tool, prompt and resource functions can return.

    from mcpbind.server.media import Audio, Image

    @server.tool()
    def chart() -> Image:
        return Image(path="chart.png")              # image/png, from the suffix

    @server.tool()
    def speak(text: str) -> list[str | Audio]:
        return [f"Saying {text!r}", Audio(synthesize(text))]   # type from the bytes

The bytes are given directly or read from ``path`` (at once, so a missing file fails inside
the function that asked for it). The MIME type is the one given, else the one the bytes' magic
numbers tell, else the one the path's suffix tells; when none does, ``ValueError`` asks for
``mime_type=``. On the wire the bytes are base64: a tool or prompt sends an ``ImageContent`` /
``AudioContent`` block, a resource a ``BlobResourceContents``.
"""

from __future__ import annotations

import base64
import mimetypes
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from mcpbind import types

__all__ = ["Audio", "Image", "Media"]

_UNSET = types.UNSET


def _riff(form: bytes) -> Callable[[bytes], bool]:
    return lambda data: data[:4] == b"RIFF" and data[8:12] == form


def _iso_brand(*brands: bytes) -> Callable[[bytes], bool]:
    """ISO base media files (MP4, HEIF): a box of type ``ftyp`` first, then the major brand."""
    return lambda data: data[4:8] == b"ftyp" and data[8:12] in brands


def _prefix(*prefixes: bytes) -> Callable[[bytes], bool]:
    return lambda data: data.startswith(prefixes)


def _mpeg_audio_frame(data: bytes) -> bool:
    # An MPEG audio frame header: 11 sync bits, then a layer other than "00" (that is AAC/ADTS).
    return len(data) > 1 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0 and data[1] & 0x06 != 0


def _adts_frame(data: bytes) -> bool:
    return len(data) > 1 and data[0] == 0xFF and data[1] & 0xF6 == 0xF0


_IMAGE_MAGIC: tuple[tuple[Callable[[bytes], bool], str], ...] = (
    (_prefix(b"\x89PNG\r\n\x1a\n"), "image/png"),
    (_prefix(b"\xff\xd8\xff"), "image/jpeg"),
    (_prefix(b"GIF87a", b"GIF89a"), "image/gif"),
    (_riff(b"WEBP"), "image/webp"),
    (_iso_brand(b"avif", b"avis"), "image/avif"),
    (_iso_brand(b"heic", b"heix", b"mif1"), "image/heic"),
    (_prefix(b"BM"), "image/bmp"),
    (_prefix(b"II*\x00", b"MM\x00*"), "image/tiff"),
    (_prefix(b"\x00\x00\x01\x00"), "image/x-icon"),
)

_AUDIO_MAGIC: tuple[tuple[Callable[[bytes], bool], str], ...] = (
    (_riff(b"WAVE"), "audio/wav"),
    (_prefix(b"fLaC"), "audio/flac"),
    (_prefix(b"OggS"), "audio/ogg"),
    (_prefix(b"ID3"), "audio/mpeg"),
    (_iso_brand(b"M4A ", b"M4B ", b"mp42", b"isom"), "audio/mp4"),
    (lambda data: data[:4] == b"FORM" and data[8:12] in (b"AIFF", b"AIFC"), "audio/aiff"),
    (_prefix(b"\x1aE\xdf\xa3"), "audio/webm"),
    (_prefix(b"MThd"), "audio/midi"),
    (_adts_frame, "audio/aac"),
    (_mpeg_audio_frame, "audio/mpeg"),
)

# Suffixes whose type the ``mimetypes`` module does not know everywhere, or knows differently.
_SUFFIXES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".avif": "image/avif",
    ".heic": "image/heic",
    ".svg": "image/svg+xml",
    ".bmp": "image/bmp",
    ".tif": "image/tiff",
    ".tiff": "image/tiff",
    ".ico": "image/x-icon",
    ".wav": "audio/wav",
    ".mp3": "audio/mpeg",
    ".ogg": "audio/ogg",
    ".oga": "audio/ogg",
    ".opus": "audio/ogg",
    ".flac": "audio/flac",
    ".aac": "audio/aac",
    ".m4a": "audio/mp4",
    ".aif": "audio/aiff",
    ".aiff": "audio/aiff",
    ".weba": "audio/webm",
    ".mid": "audio/midi",
    ".midi": "audio/midi",
}


class Media:
    """Bytes with a MIME type, sent base64-encoded; use :class:`Image` or :class:`Audio`."""

    kind: ClassVar[str] = ""
    _magic: ClassVar[tuple[tuple[Callable[[bytes], bool], str], ...]] = ()

    __slots__ = ("annotations", "data", "meta", "mime_type", "path")

    def __init__(
        self,
        data: bytes | bytearray | memoryview | None = None,
        *,
        path: str | os.PathLike[str] | None = None,
        mime_type: str | None = None,
        annotations: types.Annotations | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        name = type(self).__name__
        given: object = data
        if isinstance(given, str | os.PathLike):
            raise TypeError(f"{name}: data must be bytes; to read a file, pass path=")
        if (data is None) == (path is None):
            raise ValueError(f"{name}: give the bytes or a path, not both and not neither")
        self.path: Path | None = Path(path) if path is not None else None
        self.data: bytes = bytes(data) if data is not None else Path(path or "").read_bytes()
        self.annotations = annotations
        self.meta = meta
        self.mime_type: str = mime_type or self._guess_mime_type()

    def _guess_mime_type(self) -> str:
        for matches, mime_type in self._magic:
            if matches(self.data):
                return mime_type
        if self.path is not None:
            suffix = self.path.suffix.lower()
            guessed = _SUFFIXES.get(suffix) or mimetypes.guess_type(f"x{suffix}")[0]
            if guessed is not None and guessed.startswith(f"{self.kind}/"):
                return guessed
        where = f" of {self.path}" if self.path is not None else ""
        raise ValueError(f"{type(self).__name__}: cannot tell the {self.kind} type{where}; pass mime_type=")

    def base64(self) -> str:
        """The bytes as base64 text, as they travel."""
        return base64.b64encode(self.data).decode("ascii")

    def to_content(self) -> types.ImageContent | types.AudioContent:
        """The content block for a tool result or a prompt message."""
        raise NotImplementedError

    def to_resource_contents(self, uri: str) -> types.BlobResourceContents:
        """The contents of a resource read at ``uri``."""
        return types.BlobResourceContents(
            uri=uri,
            blob=self.base64(),
            mime_type=self.mime_type,
            meta=self.meta if self.meta is not None else _UNSET,
        )

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Media)
        return (self.data, self.mime_type, self.annotations, self.meta) == (
            other.data,
            other.mime_type,
            other.annotations,
            other.meta,
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, like the structs it becomes

    def __repr__(self) -> str:
        source = f"path={str(self.path)!r}" if self.path is not None else f"<{len(self.data)} bytes>"
        return f"{type(self).__name__}({source}, mime_type={self.mime_type!r})"


class Image(Media):
    """An image: PNG, JPEG, GIF, WebP, AVIF, HEIC, BMP, TIFF and ICO are recognised by their
    bytes, SVG and others by the path's suffix."""

    kind = "image"
    _magic = _IMAGE_MAGIC
    __slots__ = ()

    def to_content(self) -> types.ImageContent:
        return types.ImageContent(
            data=self.base64(),
            mime_type=self.mime_type,
            annotations=self.annotations if self.annotations is not None else _UNSET,
            meta=self.meta if self.meta is not None else _UNSET,
        )


class Audio(Media):
    """Audio: WAV, FLAC, Ogg, MP3, AAC (ADTS), M4A, AIFF, WebM and MIDI are recognised by their
    bytes, others by the path's suffix."""

    kind = "audio"
    _magic = _AUDIO_MAGIC
    __slots__ = ()

    def to_content(self) -> types.AudioContent:
        return types.AudioContent(
            data=self.base64(),
            mime_type=self.mime_type,
            annotations=self.annotations if self.annotations is not None else _UNSET,
            meta=self.meta if self.meta is not None else _UNSET,
        )
