"""The ``requestState`` token of multi round-trip requests (MCP 2026-07-28): what a server
carries from one round of a request to the next through the client, sealed with a keyed MAC.

The client echoes the token back unchanged on its retry, possibly to another worker: it holds
everything the server needs (the answers received so far), and it is attacker-controlled
input. So the token is signed with HMAC-SHA256 under a key of the server's, and it binds the
request it was issued for (the method and a digest of the params that matter), the user it
was issued to (when the server says who that is), the round number and an expiry; a token that fails any check is refused with -32602 naming the reason
(``data.reason``). The token is readable by whoever holds it (base64url of JSON), not
encrypted: it carries only what the client itself answered.

Every worker that may receive a retry must use the same key. Without one, a random key made
once per process is used: fine for one process (stdio, one HTTP worker), refused by every
other worker.
"""

from __future__ import annotations

import base64
import binascii
import math
import os
import time
from collections.abc import Callable
from typing import Final

import msgspec

from mcpbind.protocol.errors import INVALID_PARAMS, McpError

__all__ = [
    "FORMAT",
    "Asked",
    "RecordedAnswer",
    "RequestState",
    "RequestStateSigner",
    "digest",
]

# The token format: a token of another format (an older mcpbind's) is refused as such.
FORMAT: Final = 1
_PREFIX: Final = f"m{FORMAT}."
# What the MAC covers before the body: a key shared with other uses signs nothing valid here.
_DOMAIN: Final = b"mcpbind/request-state/" + _PREFIX.encode()
_MIN_KEY: Final = 32
_process_key: bytes | None = None


class RecordedAnswer(msgspec.Struct, array_like=True, frozen=True):
    """One answer received: for the question ``question`` (a digest of the request asked,
    ``method``) under ``key``; ``result`` is the answer as validated, encoded."""

    key: str
    method: str
    question: str
    result: msgspec.Raw


class Asked(msgspec.Struct, array_like=True, frozen=True):
    """The question the last round asked, whose answer the retry carries under ``key``."""

    key: str
    method: str
    question: str


class RequestState(msgspec.Struct, array_like=True, frozen=True):
    """What a token holds: the request it belongs to (``method``, ``params``: a digest of its
    params) and whose it is (``principal``: a digest of who asked, ``""`` when the server does
    not tell users apart), how many rounds ended with input required (``round``), until when (``expires``,
    Unix seconds), the answers in the order the handler asked for them, and what was asked
    last (``None`` when the round asked for nothing a later call takes, as for URL mode
    elicitations required by an error)."""

    method: str
    params: str
    principal: str
    round: int
    expires: int
    answers: list[RecordedAnswer]
    asked: Asked | None = None


_ENCODER: Final = msgspec.json.Encoder()
_DECODER: Final = msgspec.json.Decoder(RequestState)


def digest(data: bytes) -> str:
    """A short digest of ``data`` (SHA-256, 128 bits, base64url)."""
    import hashlib  # (here: OpenSSL's hashes cost a stdio server's start-up ~0.7 MiB it may never use)

    return _b64(hashlib.sha256(data).digest()[:16])


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    """Strict: a character outside the alphabet is an error, not skipped."""
    return base64.b64decode((text + "=" * (-len(text) % 4)).encode("ascii"), altchars=b"-_", validate=True)


def _refuse(reason: str, message: str) -> McpError:
    return McpError(INVALID_PARAMS, f"Invalid params: requestState refused: {message}", {"reason": reason})


def process_key() -> bytes:
    """The random key of this process (made on first use), for servers given none."""
    global _process_key
    if _process_key is None:
        _process_key = os.urandom(_MIN_KEY)
    return _process_key


class RequestStateSigner:
    """Seals and opens ``requestState`` tokens under ``key`` (at least 32 bytes; ``None``: the
    random key of this process, see :func:`process_key`); tokens expire ``ttl`` seconds after
    they are issued, as ``clock`` tells the time."""

    __slots__ = ("_key", "clock", "ttl")

    def __init__(
        self, key: bytes | None = None, ttl: float = 600.0, clock: Callable[[], float] = time.time
    ) -> None:
        if not ttl > 0:
            raise ValueError(f"request_state_ttl must be a positive number of seconds, not {ttl!r}")
        self._key: bytes | None = None
        self.use_key(key)
        self.ttl = ttl
        # What tells the time of issue and of expiry (Unix seconds): a test may set its own.
        self.clock = clock

    def use_key(self, key: bytes | None) -> None:
        """Seal and open tokens with ``key`` from now on (``None``: the process's key); a token
        sealed with the key before is refused. A server sharing a store takes the store's key
        this way when it starts serving (see :func:`mcpbind.store.shared_key`)."""
        if key is not None:
            if not isinstance(key, bytes | bytearray):
                raise TypeError(f"request_state_key must be bytes, not {type(key).__name__}")
            if len(key) < _MIN_KEY:
                raise ValueError(
                    f"request_state_key must be at least {_MIN_KEY} random bytes, not {len(key)} "
                    "(make one with secrets.token_bytes(32))"
                )
        self._key = bytes(key) if key is not None else None

    @property
    def has_own_key(self) -> bool:
        """Whether a key was given (else the process's random key is used)."""
        return self._key is not None

    def _mac(self, body: bytes) -> bytes:
        import hashlib
        import hmac

        key = self._key if self._key is not None else process_key()
        return hmac.new(key, _DOMAIN + body, hashlib.sha256).digest()

    def expiry(self) -> int:
        """When a token issued now expires (Unix seconds, rounded up)."""
        return math.ceil(self.clock() + self.ttl)

    def seal(self, state: RequestState) -> str:
        body = _ENCODER.encode(state)
        return _PREFIX + _b64(body) + "." + _b64(self._mac(body))

    def open(self, token: str, method: str, params: str, principal: str = "") -> RequestState:
        """The state in ``token``, checked: signed with this signer's key, not expired, issued
        for ``method`` with params of digest ``params``, to ``principal``. :class:`McpError`
        -32602 naming the reason otherwise (``data.reason``: ``"format"``, ``"malformed"``,
        ``"signature"``, ``"expired"``, ``"request"`` or ``"principal"``)."""
        import hmac

        if not token.startswith(_PREFIX):
            head = token.partition(".")[0]
            if head[:1] == "m" and head[1:].isdigit():
                raise _refuse("format", f"it has format {head[1:]}, this server reads format {FORMAT}")
            raise _refuse("malformed", "it is not a requestState this server issued")
        body_text, dot, mac_text = token[len(_PREFIX) :].partition(".")
        try:
            body, mac = _unb64(body_text), _unb64(mac_text)
        except (binascii.Error, ValueError):
            raise _refuse("malformed", "it is not valid base64url") from None
        if not dot or not hmac.compare_digest(mac, self._mac(body)):
            raise _refuse(
                "signature",
                "its signature does not match (it was changed, forged, or signed with another "
                "key: every worker must share the server's request_state_key)",
            )
        try:
            state = _DECODER.decode(body)
        except msgspec.DecodeError:
            raise _refuse("malformed", "its content is not a request state") from None
        if not self.clock() < state.expires:
            raise _refuse(
                "expired",
                f"it expired (a requestState is valid for {self.ttl:g} s); send the request anew",
            )
        if state.method != method or state.params != params:
            raise _refuse(
                "request",
                f"it was issued for another request ({state.method} with other params); a "
                "requestState is valid only on a retry of the request it came with",
            )
        if not hmac.compare_digest(state.principal, principal):
            raise _refuse("principal", "it was issued to another user")
        return state
