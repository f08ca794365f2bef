"""Where an OAuth client keeps what it obtained: access and refresh tokens (per authorization
server and resource) and its registration (per authorization server). Everything is keyed by the
authorization server's issuer, so credentials one server issued are never offered to another and a
change of authorization server means registering anew."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Protocol

import anyio
import anyio.to_thread
import msgspec

from mcpbind.oauth.registration import ClientInformation
from mcpbind.oauth.tokens import TokenResponse

__all__ = ["FileTokenStore", "MemoryTokenStore", "StoredTokens", "TokenStore"]


class StoredTokens(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Tokens for one resource. ``expires_at``: unix time the access token stops working (None:
    unknown); ``scope``: the scopes granted (space-separated), or those asked for when the
    server did not say."""

    access_token: str
    token_type: str = "Bearer"
    refresh_token: str | None = None
    expires_at: float | None = None
    scope: str | None = None

    @classmethod
    def from_response(
        cls,
        response: TokenResponse,
        *,
        requested_scope: str | None = None,
        previous_refresh_token: str | None = None,
        now: float | None = None,
    ) -> StoredTokens:
        """What to keep of a token response. A refresh answer without a new refresh token keeps
        the old one (RFC 6749 section 6)."""
        issued = time.time() if now is None else now
        return cls(
            access_token=response.access_token,
            token_type=response.token_type,
            refresh_token=response.refresh_token or previous_refresh_token,
            expires_at=issued + response.expires_in if response.expires_in is not None else None,
            scope=response.scope if response.scope is not None else requested_scope,
        )

    def expired(self, *, margin: float = 30.0, now: float | None = None) -> bool:
        """Whether the access token has expired or will within ``margin`` seconds."""
        if self.expires_at is None:
            return False
        return (time.time() if now is None else now) + margin >= self.expires_at


class TokenStore(Protocol):
    """Storage of tokens and client registrations; every method may do I/O."""

    async def get_tokens(self, issuer: str, resource: str) -> StoredTokens | None:
        """The tokens ``issuer`` granted for ``resource``, if any."""
        ...

    async def set_tokens(self, issuer: str, resource: str, tokens: StoredTokens) -> None:
        """Keep ``tokens`` (replacing those held for the pair)."""
        ...

    async def forget_tokens(self, issuer: str, resource: str) -> None:
        """Drop the tokens of the pair (they stopped working)."""
        ...

    async def get_client(self, issuer: str) -> ClientInformation | None:
        """The client's registration at ``issuer``, if any."""
        ...

    async def set_client(self, issuer: str, info: ClientInformation) -> None:
        """Keep a registration obtained from ``issuer``."""
        ...

    async def forget_client(self, issuer: str) -> None:
        """Drop the registration at ``issuer`` and every token it obtained."""
        ...


class _Contents(msgspec.Struct, kw_only=True, omit_defaults=True):
    clients: dict[str, ClientInformation] = msgspec.field(default_factory=dict)
    tokens: dict[str, dict[str, StoredTokens]] = msgspec.field(default_factory=dict)


class MemoryTokenStore:
    """A store that lives as long as the process (the default)."""

    def __init__(self) -> None:
        self._contents = _Contents()

    async def get_tokens(self, issuer: str, resource: str) -> StoredTokens | None:
        return self._contents.tokens.get(issuer, {}).get(resource)

    async def set_tokens(self, issuer: str, resource: str, tokens: StoredTokens) -> None:
        self._contents.tokens.setdefault(issuer, {})[resource] = tokens

    async def forget_tokens(self, issuer: str, resource: str) -> None:
        self._contents.tokens.get(issuer, {}).pop(resource, None)

    async def get_client(self, issuer: str) -> ClientInformation | None:
        return self._contents.clients.get(issuer)

    async def set_client(self, issuer: str, info: ClientInformation) -> None:
        self._contents.clients[issuer] = info

    async def forget_client(self, issuer: str) -> None:
        self._contents.clients.pop(issuer, None)
        # Tokens a registration obtained go with it.
        self._contents.tokens.pop(issuer, None)


_decoder = msgspec.json.Decoder(_Contents)


class FileTokenStore:
    """A JSON file (``~`` expanded) readable by its owner only (created with mode 0600, in a folder created 0700
    when missing), replaced atomically on every change so a crash never leaves half a file."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        self._lock = anyio.Lock()

    def _read(self) -> _Contents:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return _Contents()
        if not data.strip():
            return _Contents()
        try:
            return _decoder.decode(data)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise ValueError(f"{self.path} is not a token store written by mcpbind ({exc})") from None

    def _write(self, contents: _Contents) -> None:
        folder = self.path.parent
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=folder)  # mode 0600
        try:
            with os.fdopen(descriptor, "wb") as file:
                file.write(msgspec.json.format(msgspec.json.encode(contents)))
                file.flush()
                os.fsync(file.fileno())
            os.chmod(temporary, 0o600)
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    async def _load(self) -> _Contents:
        return await anyio.to_thread.run_sync(self._read)

    async def _save(self, contents: _Contents) -> None:
        await anyio.to_thread.run_sync(self._write, contents)

    async def get_tokens(self, issuer: str, resource: str) -> StoredTokens | None:
        async with self._lock:
            return (await self._load()).tokens.get(issuer, {}).get(resource)

    async def set_tokens(self, issuer: str, resource: str, tokens: StoredTokens) -> None:
        async with self._lock:
            contents = await self._load()
            contents.tokens.setdefault(issuer, {})[resource] = tokens
            await self._save(contents)

    async def forget_tokens(self, issuer: str, resource: str) -> None:
        async with self._lock:
            contents = await self._load()
            if contents.tokens.get(issuer, {}).pop(resource, None) is not None:
                await self._save(contents)

    async def get_client(self, issuer: str) -> ClientInformation | None:
        async with self._lock:
            return (await self._load()).clients.get(issuer)

    async def set_client(self, issuer: str, info: ClientInformation) -> None:
        async with self._lock:
            contents = await self._load()
            contents.clients[issuer] = info
            await self._save(contents)

    async def forget_client(self, issuer: str) -> None:
        async with self._lock:
            contents = await self._load()
            contents.clients.pop(issuer, None)
            contents.tokens.pop(issuer, None)
            await self._save(contents)
