"""Reading the server's HTTP responses without trusting them: a body within a size limit, the
start of an error body for messages, the media type, and closing a response under
cancellation."""

from __future__ import annotations

import anyio
import httpx

__all__ = ["ERROR_BODY_LIMIT", "close", "error_body", "media_type", "read_body"]

ERROR_BODY_LIMIT = 4096
"""How much of an error body is kept for the error message and ``HTTPTransportError``."""


def media_type(response: httpx.Response) -> str:
    value: str = response.headers.get("content-type", "")
    return value.partition(";")[0].strip().lower()


async def read_body(response: httpx.Response, limit: int) -> bytes | None:
    """The whole body, or ``None`` as soon as it is known to exceed ``limit`` bytes."""
    declared = response.headers.get("content-length")
    if declared is not None and _too_large(declared, limit):
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(content_length: str, limit: int) -> bool:
    """Whether a Content-Length value (ASCII digits, else ignored) is over ``limit``."""
    if not content_length.isascii() or not content_length.isdigit():
        return False  # ("²".isdigit() is true, and int() refuses it)
    return len(content_length) > 18 or int(content_length) > limit  # (int() refuses 4,301 digits)


async def error_body(response: httpx.Response) -> str:
    """The start of an error response's body, for messages; never raises."""
    try:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size >= ERROR_BODY_LIMIT:
                break
        return b"".join(chunks)[:ERROR_BODY_LIMIT].decode("utf-8", "replace").strip()
    except httpx.HTTPError:
        return ""


async def close(response: httpx.Response) -> None:
    """Close ``response`` (shielded from cancellation); network errors are ignored."""
    with anyio.CancelScope(shield=True):
        try:
            await response.aclose()
        except httpx.HTTPError:
            pass
