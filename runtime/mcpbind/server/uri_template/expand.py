"""RFC 6570 expansion (levels 1-4) of one parsed expression."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

from mcpbind.server.uri_template.encoding import encode
from mcpbind.server.uri_template.syntax import Expression

__all__ = ["ScalarValue", "VariableValue", "expand_expression"]

ScalarValue: TypeAlias = "str | int | float"
VariableValue: TypeAlias = (
    "str | int | float | Sequence[str | int | float] | Mapping[str, str | int | float] | None"
)


def _scalar(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return str(value)
    return None


def expand_expression(expr: Expression, values: Mapping[str, VariableValue]) -> str:
    op = expr.op
    parts: list[str] = []
    for spec in expr.varspecs:
        value = values.get(spec.name)
        if value is None:
            continue
        scalar = _scalar(value)
        if scalar is not None:
            if spec.prefix is not None:
                scalar = scalar[: spec.prefix]
            encoded = encode(scalar, op.allow_reserved)
            if op.named:
                parts.append(spec.name + ("=" + encoded if scalar else op.ifemp))
            else:
                parts.append(encoded)
            continue
        pairs: list[tuple[str, str]]
        if isinstance(value, Mapping):
            pairs = []
            for k, v in value.items():
                ks, vs = _scalar(k), _scalar(v)
                if ks is None or vs is None:
                    raise TypeError(
                        f"variable {spec.name!r}: mapping keys and values must be str, int or float"
                    )
                pairs.append((ks, vs))
            is_map = True
        elif isinstance(value, Sequence):
            pairs = []
            for item in value:
                s = _scalar(item)
                if s is None:
                    raise TypeError(f"variable {spec.name!r}: list items must be str, int or float")
                pairs.append(("", s))
            is_map = False
        else:
            raise TypeError(f"variable {spec.name!r}: unsupported value type {type(value).__name__}")
        if not pairs:
            continue  # empty list / mapping: undefined
        if spec.prefix is not None:
            raise ValueError(
                f"prefix modifier ':{spec.prefix}' cannot apply to composite variable {spec.name!r}"
            )

        def enc(s: str) -> str:
            return encode(s, op.allow_reserved)

        if spec.explode:
            items: list[str] = []
            for k, v in pairs:
                if is_map:
                    if op.named:
                        items.append(enc(k) + ("=" + enc(v) if v else op.ifemp))
                    else:
                        items.append(enc(k) + "=" + enc(v))
                elif op.named:
                    items.append(spec.name + ("=" + enc(v) if v else op.ifemp))
                else:
                    items.append(enc(v))
            parts.append(op.sep.join(items))
        else:
            flat: list[str] = []
            for k, v in pairs:
                if is_map:
                    flat.append(enc(k))
                flat.append(enc(v))
            joined = ",".join(flat)
            parts.append(spec.name + "=" + joined if op.named else joined)
    if not parts:
        return ""
    return op.first + op.sep.join(parts)
