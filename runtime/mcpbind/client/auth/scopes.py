"""Which scopes to ask for (MCP's scope selection strategy): the ``scope`` of the server's
challenge, else the ones the caller configured, else all of the resource metadata's
``scopes_supported``, else none (the ``scope`` parameter is omitted). On step-up the challenge's
scopes are added to those asked for before, so nothing granted is lost. A client that wants a
refresh token adds ``offline_access`` when the authorization server lists it."""

from __future__ import annotations

from collections.abc import Iterable

from mcpbind.oauth.metadata import AuthorizationServerMetadata, ProtectedResourceMetadata

__all__ = ["OFFLINE_ACCESS", "join_scopes", "select_scopes", "split_scopes"]

OFFLINE_ACCESS = "offline_access"


def split_scopes(value: str | None) -> list[str]:
    """The scopes of a space-separated ``scope`` value, in order, without repeats."""
    return list(dict.fromkeys((value or "").split()))


def join_scopes(scopes: Iterable[str]) -> str | None:
    """A ``scope`` value (None when there are no scopes: the parameter is then left out)."""
    joined = " ".join(dict.fromkeys(scopes))
    return joined or None


def select_scopes(
    *,
    challenge_scope: str | None,
    configured: list[str] | None,
    prm: ProtectedResourceMetadata | None,
    metadata: AuthorizationServerMetadata | None,
    previous: Iterable[str] = (),
    wants_refresh: bool = True,
) -> str | None:
    """The ``scope`` to send in an authorization request (None: omit it). ``previous``: what
    was asked for before (a step-up keeps it); ``wants_refresh``: add ``offline_access`` when
    the authorization server's ``scopes_supported`` has it and other scopes are asked for."""
    if challenge_scope:
        chosen = split_scopes(challenge_scope)
    elif configured:
        chosen = list(configured)
    elif prm is not None and prm.scopes_supported:
        chosen = [scope for scope in prm.scopes_supported if scope != OFFLINE_ACCESS]
    else:
        chosen = []
    scopes = list(dict.fromkeys([*previous, *chosen]))
    supported = (metadata.scopes_supported or []) if metadata is not None else []
    if wants_refresh and scopes and OFFLINE_ACCESS in supported and OFFLINE_ACCESS not in scopes:
        scopes.append(OFFLINE_ACCESS)
    return join_scopes(scopes)
