"""The base class of every generated MCP type."""

from __future__ import annotations

import msgspec

__all__ = ["SchemaStruct"]


class SchemaStruct(msgspec.Struct, kw_only=True, repr_omit_defaults=True):
    """Base of the generated structs: keyword-only construction, unknown fields ignored.

    Optional members default to ``msgspec.UNSET`` and are left out on encode, so a struct
    encodes to exactly the members that were set (or received).

    Decode them with ``mcpbind.protocol.unions.decode(data, EmbeddedResource)``, not plain
    ``msgspec.json.decode(data, type=EmbeddedResource)``, which fails on the schema's untagged
    unions (see :mod:`mcpbind.protocol.unions`).
    """
