"""The Protected Resource Metadata document a protected server serves (RFC 9728): this
resource, the authorization server that issues its tokens (its issuer exactly as configured),
the scopes it knows and how it takes tokens (the header only)."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from mcpbind.oauth.metadata import ProtectedResourceMetadata
from mcpbind.server.auth.settings import ResourceServerAuth

__all__ = ["metadata_document"]


def metadata_document(auth: ResourceServerAuth, required: Iterable[str] = ()) -> bytes:
    """The JSON document; ``scopes_supported`` is the configured list, else every scope the
    server requires (``auth.required_scopes`` and ``required``: those of its tools, resources,
    prompts and methods), left out when there are none."""
    scopes = auth.scopes_supported
    if scopes is None:
        every = set(auth.required_scopes).union(required)
        scopes = sorted(every) if every else None
    document = ProtectedResourceMetadata(
        resource=auth.resource,
        authorization_servers=[auth.issuer],
        scopes_supported=scopes,
        bearer_methods_supported=["header"],
        resource_name=auth.resource_name,
        resource_documentation=auth.resource_documentation,
    )
    return msgspec.json.encode(document)
