"""What a resource server knows of a verified access token, as handlers see it
(``ctx.access_token``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["AccessToken"]


@dataclass(frozen=True, slots=True)
class AccessToken:
    """A token that passed verification. ``subject``: the ``sub`` claim (who the token stands
    for); ``client_id``: the OAuth client it was issued to; ``scopes``: what it grants;
    ``expires_at``: Unix time, None when it does not say; ``audience``: the ``aud`` values;
    ``claims``: every claim of the JWT or introspection answer. The token's text is kept out of
    ``repr`` so that it never reaches a log."""

    token: str = field(repr=False)
    subject: str | None
    client_id: str | None
    scopes: frozenset[str]
    issuer: str | None = None
    expires_at: int | None = None
    audience: tuple[str, ...] = ()
    claims: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def has_scopes(self, needed: frozenset[str] | set[str] | tuple[str, ...] | list[str]) -> bool:
        return self.scopes.issuperset(needed)

    @property
    def principal(self) -> tuple[str | None, str | None, str | None]:
        """Who presents the token: its issuer, subject and client. A session is bound to the
        principal of the token that opened it."""
        return (self.issuer, self.subject, self.client_id)
