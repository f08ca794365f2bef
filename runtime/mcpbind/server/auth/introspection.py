"""Verifying opaque access tokens by asking the authorization server (OAuth 2.0 Token
Introspection, RFC 7662): a token is accepted when the answer says ``active`` and its claims
pass the same checks as a JWT's (:mod:`.claims`: issuer, audience, time window)."""

from __future__ import annotations

import json
import logging
from typing import Literal

import httpx

from mcpbind.oauth.access_token import AccessToken
from mcpbind.server.auth.claims import ClaimRules, audiences_for
from mcpbind.server.auth.errors import InvalidToken, VerifierUnavailable
from mcpbind.server.auth.verifier import DEFAULT_MAX_TOKEN_BYTES, check_token_text

__all__ = ["IntrospectionVerifier"]

log = logging.getLogger("mcpbind.auth")


class IntrospectionVerifier:
    """Verifies tokens at ``introspection_url``, authenticating as ``client_id`` with
    ``client_secret`` (``client_secret_basic``, or ``client_secret_post`` with
    ``auth_method``; no secret: the client id alone, in the form).

    An active token must have been issued for ``audience`` (this server's resource URL: the
    answer's ``aud`` must name it, unless ``require_audience`` is false, when an answer without
    ``aud`` is accepted), by ``issuer`` when given (the answer's ``iss`` must then be it), and be
    within its time window (``leeway`` seconds of skew). The answer must come within
    ``timeout`` seconds and hold at most ``max_response_bytes``; otherwise, or on an HTTP error,
    :class:`VerifierUnavailable` (503)."""

    def __init__(
        self,
        *,
        introspection_url: str,
        audience: str,
        client_id: str,
        client_secret: str | None = None,
        issuer: str | None = None,
        auth_method: Literal["client_secret_basic", "client_secret_post"] = "client_secret_basic",
        require_audience: bool = True,
        leeway: float = 60.0,
        max_token_bytes: int = DEFAULT_MAX_TOKEN_BYTES,
        http_client: httpx.AsyncClient | None = None,
        timeout: float = 10.0,
        max_response_bytes: int = 1 << 16,
    ) -> None:
        if not introspection_url.startswith(("https://", "http://")):
            raise ValueError(f"introspection_url must be an http(s) URL, not {introspection_url!r}")
        self.url = introspection_url
        self.client_id = client_id
        self.client_secret = client_secret
        self.auth_method = auth_method
        self.max_token_bytes = max_token_bytes
        self.timeout = timeout
        self.max_response_bytes = max_response_bytes
        # (An introspection answer need not carry exp: an active token is current by definition.)
        self.rules = ClaimRules(
            issuer, audiences_for(audience), leeway, require_expiry=False, require_audience=require_audience
        )
        self._client = http_client
        self._own_client = False

    async def verify(self, token: str) -> AccessToken:
        check_token_text(token, self.max_token_bytes)
        form = {"token": token, "token_type_hint": "access_token"}
        auth: httpx.BasicAuth | None = None
        if self.client_secret is not None and self.auth_method == "client_secret_basic":
            auth = httpx.BasicAuth(self.client_id, self.client_secret)
        else:
            form["client_id"] = self.client_id
            if self.client_secret is not None:
                form["client_secret"] = self.client_secret
        client = self._client
        if client is None:
            client = self._client = httpx.AsyncClient(follow_redirects=False)
            self._own_client = True
        try:
            async with client.stream(
                "POST",
                self.url,
                data=form,
                auth=auth if auth is not None else httpx.USE_CLIENT_DEFAULT,
                headers={"accept": "application/json"},
                timeout=self.timeout,
            ) as response:
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > self.max_response_bytes:
                        raise ValueError(f"answer larger than {self.max_response_bytes} bytes")
                if response.status_code != 200:
                    raise ValueError(f"HTTP {response.status_code}")
            answer = json.loads(bytes(body))
        except (httpx.HTTPError, ValueError) as exc:
            log.warning("token introspection at %s failed: %s", self.url, exc)
            raise VerifierUnavailable("the introspection endpoint did not answer") from None
        if not isinstance(answer, dict):
            raise VerifierUnavailable("the introspection endpoint's answer is no JSON object")
        if answer.get("active") is not True:
            raise InvalidToken("inactive")
        return self.rules.check(answer, token)

    async def aclose(self) -> None:
        """Close the HTTP client this verifier made (not one it was given)."""
        if self._own_client and self._client is not None:
            client, self._client = self._client, None
            await client.aclose()
