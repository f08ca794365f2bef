"""The scopes a request needs, checked from its body before its handler runs: those of the
method (``ResourceServerAuth(method_scopes=...)``) and of the tool, prompt or resource it names
(``scopes=`` on the decorators). It runs in the HTTP app once the body is read (the app's
``authorize`` hook), so handlers registered with ``on()`` are covered too."""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from typing import Protocol

import msgspec
from msgspec import UnsetType

from mcpbind.protocol.errors import INVALID_REQUEST
from mcpbind.protocol.peek import peek_request
from mcpbind.runtime.access import current_access_token
from mcpbind.server.auth.bearer import challenge_header
from mcpbind.server.scopes import NO_SCOPES, RequiredScopes
from mcpbind.transports.http.errors import HttpError


class _Template(Protocol):
    @property
    def template(self) -> object: ...

    def match(self, uri: str, /) -> Mapping[str, object] | None: ...


class ScopedServer(Protocol):
    """What the check reads of a :class:`~mcpbind.server.server.Server` (a protocol, so that
    this module does not import the server, which builds the app it runs in)."""

    @property
    def required_scopes(self) -> RequiredScopes: ...

    @property
    def resources(self) -> Container[str]: ...

    @property
    def resource_templates(self) -> Sequence[_Template]: ...


__all__ = ["ScopeCheck", "ScopedServer"]

_NO_RULES = RequiredScopes()


class ScopeCheck:
    """Refuses (403 ``insufficient_scope``) a request whose token lacks what it needs: the
    scopes of ``method_scopes`` for its method, of ``server.required_scopes`` for what it
    names. The challenge asks for what is needed and what every request needs
    (``base``), plus what the token has already (so that a new token loses nothing)."""

    def __init__(
        self,
        server: ScopedServer | None,
        method_scopes: Mapping[str, frozenset[str]],
        base: frozenset[str],
        resource_metadata: str,
    ) -> None:
        self.server = server
        self.rules = server.required_scopes if server is not None else _NO_RULES
        self.method_scopes = method_scopes
        self.base = base
        self.resource_metadata = resource_metadata

    def _templates(self) -> Iterable[tuple[str, Callable[[str], Mapping[str, object] | None]]]:
        assert self.server is not None
        return [(str(template.template), template.match) for template in self.server.resource_templates]

    def __call__(self, body: bytes) -> None:
        if not self.rules and not self.method_scopes:
            return
        try:
            peeked = peek_request(body)
        except (msgspec.DecodeError, RecursionError):
            return  # no JSON-RPC request: the app refuses it
        method = peeked.method
        if isinstance(method, UnsetType):
            return
        params = peeked.params
        name = None if isinstance(params, UnsetType) else params.name
        uri = None if isinstance(params, UnsetType) else params.uri
        needed = self.method_scopes.get(method, NO_SCOPES)
        if self.rules:
            resources: Container[str] = self.server.resources if self.server is not None else ()
            needed = needed | self.rules.needed(method, name, uri, resources, self._templates)
        if not needed:
            return
        token = current_access_token.get()
        granted = token.scopes if token is not None else NO_SCOPES
        if granted.issuperset(needed):
            return
        ident = peeked.id if isinstance(peeked.id, str | int) and not isinstance(peeked.id, bool) else None
        header = challenge_header(
            self.resource_metadata, error="insufficient_scope", scopes=needed | self.base | granted
        )
        raise HttpError(403, INVALID_REQUEST, "Forbidden: insufficient scope", ident, headers=[header])
