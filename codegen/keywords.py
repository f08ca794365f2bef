"""What the generator does with each JSON Schema keyword, and the audit of a schema against it.

Every keyword met in a schema is in exactly one of three tables:

* :data:`HONOURED`: it shapes the generated types (``type``, ``properties``, ``anyOf``...), or
  becomes documentation (``description``).
* :data:`IGNORED`: it is knowingly left out, for the reason given (annotations such as
  ``$schema``, and value constraints such as ``format`` or ``maximum``, which the generated
  types do not check: they accept every value of the right shape).
* :data:`UNSUPPORTED`: a shape the generated types cannot represent (``prefixItems``,
  ``items: false``...): generation stops with a message naming each place.

Any other keyword is dropped with a warning that names it and where it is. So is a keyword
that is honoured in general but not where it sits (``properties`` beside a ``$ref``), and a
default value that is not a scalar.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

HONOURED: dict[str, str] = {
    "$defs": "the definitions (2020-12)",
    "definitions": "the definitions (draft-07)",
    "$ref": "a reference to a definition",
    "type": "the Python type",
    "properties": "the struct members",
    "required": "members without a default",
    "additionalProperties": "an open object is a dict",
    "items": "the list item type",
    "anyOf": "a union",
    "oneOf": "a union",
    "allOf": "merged into one object",
    "const": "a Literal (or the struct's tag)",
    "enum": "a Literal",
    "default": "the default of an optional member (scalars only)",
    "description": "docstrings and comments",
}

_NOT_CHECKED = "a value constraint: the generated types accept any value of the right shape"
IGNORED: dict[str, str] = {
    "$schema": "the dialect: draft-07 and 2020-12 are read the same way",
    "$id": "an identifier: references are resolved within the file",
    "$comment": "a comment",
    "title": "an annotation",
    "examples": "an annotation",
    "deprecated": "an annotation",
    "readOnly": "an annotation",
    "writeOnly": "an annotation",
    "contentEncoding": "an annotation: strings stay str",
    "contentMediaType": "an annotation: strings stay str",
    "format": "strings stay str: a format (uri, byte, date-time...) is not checked",
    "minimum": _NOT_CHECKED,
    "maximum": _NOT_CHECKED,
    "exclusiveMinimum": _NOT_CHECKED,
    "exclusiveMaximum": _NOT_CHECKED,
    "multipleOf": _NOT_CHECKED,
    "minLength": _NOT_CHECKED,
    "maxLength": _NOT_CHECKED,
    "pattern": _NOT_CHECKED,
    "minItems": _NOT_CHECKED,
    "maxItems": _NOT_CHECKED,
    "uniqueItems": _NOT_CHECKED,
    "minProperties": _NOT_CHECKED,
    "maxProperties": _NOT_CHECKED,
}

UNSUPPORTED: dict[str, str] = {
    "prefixItems": "a tuple (a type per position) has no binding",
    "additionalItems": "a tuple (a type per position) has no binding",
    "unevaluatedItems": "a tuple (a type per position) has no binding",
    "contains": "a list whose items need not all match has no binding",
    "not": "a negated schema has no binding",
    "if": "a conditional schema has no binding",
    "then": "a conditional schema has no binding",
    "else": "a conditional schema has no binding",
    "dependentSchemas": "members that depend on other members have no binding",
    "dependencies": "members that depend on other members have no binding",
    "dependentRequired": "members that depend on other members have no binding",
    "patternProperties": "members matched by a pattern would be dropped by a struct",
    "propertyNames": "constrained member names have no binding",
    "unevaluatedProperties": "members that no keyword names would be dropped by a struct",
    "$dynamicRef": "dynamic references are not resolved",
    "$dynamicAnchor": "dynamic references are not resolved",
    "$recursiveRef": "dynamic references are not resolved",
    "$recursiveAnchor": "dynamic references are not resolved",
    "$anchor": "references by anchor are not resolved",
}

TYPES = frozenset({"string", "integer", "number", "boolean", "null", "array", "object"})
# Beside these, the other keywords of the node are not read (the node is a reference or a union).
_EXCLUSIVE = ("$ref", "anyOf", "oneOf")
_BESIDE_EXCLUSIVE = frozenset(
    {"properties", "required", "additionalProperties", "items", "const", "enum", "allOf", "anyOf", "oneOf"}
)


@dataclass
class Audit:
    """The outcome of :func:`audit`: shapes that stop generation, and keywords dropped."""

    errors: list[str] = field(default_factory=list)
    dropped: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (what, why) -> places

    def warnings(self, shown: int = 5) -> list[str]:
        """One line per dropped keyword: what, (the first few of) where, and why."""
        out = []
        for (what, why), places in self.dropped.items():
            more = f" and {len(places) - shown} more" if len(places) > shown else ""
            out.append(f"{what} dropped at {', '.join(places[:shown])}{more}: {why}")
        return out


def pointer(*parts: str | int) -> str:
    """A JSON pointer fragment (``#/$defs/Tool/properties/name``), with ``~`` and ``/`` escaped."""
    return "#" + "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def audit(schema: Any) -> Audit:
    """Check every keyword of ``schema`` (a whole schema.json) against the tables above."""
    result = Audit()
    if not isinstance(schema, dict):
        result.errors.append("the schema is not a JSON object")
        return result
    key = "$defs" if "$defs" in schema else "definitions"
    definitions = schema.get(key)
    if not isinstance(definitions, dict) or not definitions:
        result.errors.append('the schema has no definitions ("$defs" or "definitions")')
        return result
    for finding in _walk(schema, (), f"#/{key}/", definitions, root=True):
        if finding.error:
            result.errors.append(f"{finding.what} at {finding.where}: {finding.why}")
        else:
            result.dropped.setdefault((finding.what, finding.why), []).append(finding.where)
    return result


@dataclass(frozen=True)
class Finding:
    error: bool  # the shape has no binding (else the keyword is dropped)
    what: str
    where: str
    why: str


def _error(what: str, where: str, why: str) -> Finding:
    return Finding(True, what, where, why)


def _drop(what: str, where: str, why: str) -> Finding:
    return Finding(False, what, where, why)


def _walk(
    node: Any, path: tuple[str | int, ...], prefix: str, definitions: dict[str, Any], root: bool = False
) -> Iterator[Finding]:
    """What is wrong with ``node`` and everything under it."""
    where = pointer(*path)
    if isinstance(node, bool):
        if node is False:
            yield _error("`false`", where, "a schema nothing matches has no binding")
        return
    if not isinstance(node, dict):
        yield _error(repr(node), where, "not a schema")
        return
    exclusive = next((k for k in _EXCLUSIVE if k in node), None)
    for keyword, value in node.items():
        at = (*path, keyword)
        if keyword in UNSUPPORTED:
            yield _error(f"`{keyword}`", pointer(*at), UNSUPPORTED[keyword])
            continue
        if keyword in IGNORED:
            continue
        if keyword not in HONOURED:
            yield _drop(f"`{keyword}`", pointer(*at), "not a keyword this generator knows")
            continue
        if keyword in ("$defs", "definitions") and not root:
            yield _drop(f"`{keyword}`", pointer(*at), "only the top-level definitions are read")
            continue
        if exclusive is not None and keyword != exclusive and keyword in _BESIDE_EXCLUSIVE:
            yield _drop(f"`{keyword}` beside `{exclusive}`", pointer(*at), f"only `{exclusive}` is read")
            continue
        yield from _check(keyword, value, at, prefix, definitions)


def _check(
    keyword: str, value: Any, at: tuple[str | int, ...], prefix: str, definitions: dict[str, Any]
) -> Iterator[Finding]:
    where = pointer(*at)
    if keyword in ("$defs", "definitions", "properties"):
        if not isinstance(value, dict):
            yield _error(f"`{keyword}`", where, "not an object")
            return
        for name, sub in value.items():
            yield from _walk(sub, (*at, name), prefix, definitions)
    elif keyword in ("anyOf", "oneOf", "allOf"):
        if not isinstance(value, list) or not value:
            yield _error(f"`{keyword}`", where, "not a non-empty list")
            return
        for i, sub in enumerate(value):
            yield from _walk(sub, (*at, i), prefix, definitions)
    elif keyword == "items":
        if isinstance(value, list):
            yield _error("`items` as a list", where, "a tuple (a type per position) has no binding")
        elif value is False:
            yield _error("`items: false`", where, "a list that may hold nothing has no binding")
        else:
            yield from _walk(value, at, prefix, definitions)
    elif keyword == "additionalProperties":
        if not isinstance(value, bool):
            yield from _walk(value, at, prefix, definitions)
    elif keyword == "$ref":
        if (
            not isinstance(value, str)
            or not value.startswith(prefix)
            or value[len(prefix) :] not in definitions
        ):
            yield _error(
                f"`$ref` {value!r}", where, f"only references to {prefix}<name> of this file are resolved"
            )
    elif keyword == "type":
        kinds = value if isinstance(value, list) else [value]
        unknown = [k for k in kinds if k not in TYPES]
        if unknown or not kinds:
            yield _error(f"`type` {value!r}", where, "not a JSON Schema type")
    elif keyword == "const":
        if not _is_scalar(value):
            yield _error(
                f"`const` {value!r}", where, "only a string, number, boolean or null constant has a binding"
            )
    elif keyword == "enum":
        if not isinstance(value, list) or not value or not all(_is_scalar(v) for v in value):
            yield _error("`enum`", where, "only a list of strings, numbers, booleans or null has a binding")
    elif keyword == "default":
        if not _is_scalar(value):
            yield _drop(
                "`default`",
                where,
                "only a string, number, boolean or null default becomes a member's default",
            )
    elif keyword == "required":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            yield _error("`required`", where, "not a list of names")
