"""How a protected MCP server checks access tokens (:class:`ResourceServerAuth`): which
authorization server issues them, for which resource, how they are verified, and which scopes
every request needs. Checked when made: a mistake is a ``ValueError`` at startup, not a
refusal of every request later."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

from mcpbind.oauth.metadata import protected_resource_metadata_urls
from mcpbind.server.auth.algorithms import DEFAULT_ALGORITHMS, check_algorithms
from mcpbind.server.auth.verifier import DEFAULT_MAX_TOKEN_BYTES, TokenVerifier
from mcpbind.server.scopes import normalize_scopes

if TYPE_CHECKING:
    import httpx

__all__ = ["ResourceServerAuth"]

_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def _check_url(name: str, url: str, *, https_unless_loopback: bool) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise ValueError(f"{name} must be an absolute http(s) URL, not {url!r}")
    if parts.fragment or "#" in url:
        raise ValueError(f"{name} must not have a fragment: {url!r}")
    if https_unless_loopback and parts.scheme == "http" and parts.hostname not in _LOOPBACK:
        raise ValueError(f"{name} must be an https URL (http only on a loopback host): {url!r}")


class ResourceServerAuth:
    """The settings of a protected server (pass them to ``Server.http_app(auth=...)``).

    * ``issuer``: the authorization server's issuer identifier, named as given (no slash added)
      in the Protected Resource Metadata, and the ``iss`` tokens must carry.
    * ``resource``: this MCP endpoint's public URL (``https://mcp.example.com/mcp``): the
      audience tokens must be issued for (RFC 8707), and the ``resource`` of the metadata.
    * How tokens are verified, one of: ``jwks_url`` (JWTs signed with a key of that set,
      :class:`~mcpbind.server.auth.jwt_verifier.JWTVerifier`); ``introspection_url`` with
      ``client_id`` and ``client_secret`` (RFC 7662,
      :class:`~mcpbind.server.auth.introspection.IntrospectionVerifier`); ``verifier``, a
      :class:`~mcpbind.server.auth.verifier.TokenVerifier` of one's own.
    * ``required_scopes``: what every request needs (403 ``insufficient_scope`` without);
      ``method_scopes``: what requests of a method need (``{"tools/call": ["tools"]}``), for
      handlers registered with ``on()``; tools, resources and prompts of the decorators take
      ``scopes=`` of their own.
    * ``algorithms`` (asymmetric JWS algorithms only), ``leeway`` (seconds of clock skew),
      ``max_token_bytes`` (longer tokens are refused unread): for the built-in verifiers.
    * ``scopes_supported``, ``resource_name``, ``resource_documentation``: for the metadata
      document (``scopes_supported`` defaults to every scope the server requires).
    * ``http_client``: what the built-in verifiers fetch keys or introspect with.
    """

    def __init__(
        self,
        issuer: str,
        resource: str,
        *,
        jwks_url: str | None = None,
        introspection_url: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        introspection_auth_method: Literal[
            "client_secret_basic", "client_secret_post"
        ] = "client_secret_basic",
        verifier: TokenVerifier | None = None,
        required_scopes: Iterable[str] | str = (),
        method_scopes: Mapping[str, Iterable[str] | str] | None = None,
        algorithms: Iterable[str] = DEFAULT_ALGORITHMS,
        leeway: float = 60.0,
        max_token_bytes: int = DEFAULT_MAX_TOKEN_BYTES,
        scopes_supported: Sequence[str] | None = None,
        resource_name: str | None = None,
        resource_documentation: str | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        _check_url("issuer", issuer, https_unless_loopback=True)
        if urlsplit(issuer).query:
            raise ValueError(f"issuer must not have a query (RFC 8414 section 2): {issuer!r}")
        _check_url("resource", resource, https_unless_loopback=False)
        chosen = [
            name
            for name, value in (
                ("jwks_url", jwks_url),
                ("introspection_url", introspection_url),
                ("verifier", verifier),
            )
            if value is not None
        ]
        if len(chosen) != 1:
            raise ValueError(
                "give exactly one way to verify tokens: jwks_url, introspection_url (with client_id) or verifier"
                + (f" (got {', '.join(chosen)})" if chosen else "")
            )
        if leeway < 0:
            raise ValueError("leeway must not be negative")
        if max_token_bytes < 16:
            raise ValueError("max_token_bytes is too small")
        self.issuer = issuer
        self.resource = resource
        self.algorithms = check_algorithms(algorithms)
        self.leeway = leeway
        self.max_token_bytes = max_token_bytes
        self.required_scopes = normalize_scopes(required_scopes)
        self.method_scopes = {
            method: normalize_scopes(scopes) for method, scopes in (method_scopes or {}).items()
        }
        if scopes_supported is not None:
            normalize_scopes(scopes_supported)  # (checked)
        self.scopes_supported = None if scopes_supported is None else list(scopes_supported)
        self.resource_name = resource_name
        self.resource_documentation = resource_documentation
        if verifier is not None:
            if not isinstance(verifier, TokenVerifier):
                raise ValueError("verifier must have an async verify(token) method")
            self.verifier: TokenVerifier = verifier
        elif jwks_url is not None:
            # (The verifiers are imported when used: the command line reads these settings
            # without loading joserfc and httpx.)
            from mcpbind.server.auth.jwt_verifier import JWTVerifier

            _check_url("jwks_url", jwks_url, https_unless_loopback=True)
            self.verifier = JWTVerifier(
                issuer=issuer,
                audience=resource,
                jwks_url=jwks_url,
                algorithms=self.algorithms,
                leeway=leeway,
                max_token_bytes=max_token_bytes,
                http_client=http_client,
            )
        else:
            from mcpbind.server.auth.introspection import IntrospectionVerifier

            assert introspection_url is not None
            _check_url("introspection_url", introspection_url, https_unless_loopback=True)
            if not client_id:
                raise ValueError(
                    "introspection_url needs the client_id (and client_secret) to introspect with"
                )
            self.verifier = IntrospectionVerifier(
                introspection_url=introspection_url,
                audience=resource,
                client_id=client_id,
                client_secret=client_secret,
                issuer=issuer,
                auth_method=introspection_auth_method,
                leeway=leeway,
                max_token_bytes=max_token_bytes,
                http_client=http_client,
            )

    @property
    def metadata_url(self) -> str:
        """The URL of this resource's Protected Resource Metadata (the path-aware one, RFC 9728
        section 3.1), which 401 and 403 answers name in ``resource_metadata``."""
        return protected_resource_metadata_urls(self.resource)[0]

    @property
    def metadata_paths(self) -> tuple[str, ...]:
        """The paths the metadata is served at: the path-aware one and the root one."""
        return tuple(urlsplit(url).path for url in protected_resource_metadata_urls(self.resource))
