"""Property tests: any instance of any generated struct encodes and decodes back unchanged.

Instances are drawn from the structs' own type information (``msgspec.inspect``), so a new
member or a new version is covered without touching this file.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import msgspec
import msgspec.inspect as mi
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codegen.pins import load_pins
from mcpbind.protocol.unions import ResolvedUnion, decode
from mcpbind.schema import load

TEXT = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=12)
JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)


def for_type(t: mi.Type) -> st.SearchStrategy[Any]:
    if isinstance(t, mi.StrType):
        return TEXT
    if isinstance(t, mi.BoolType):
        return st.booleans()
    if isinstance(t, mi.IntType):
        return st.integers(-(2**53), 2**53)
    if isinstance(t, mi.FloatType):
        return st.floats(allow_nan=False, allow_infinity=False)
    if isinstance(t, mi.NoneType):
        return st.none()
    if isinstance(t, mi.AnyType):
        return JSON_VALUES
    if isinstance(t, mi.LiteralType):
        return st.sampled_from(t.values)
    if isinstance(t, mi.ListType):
        return st.lists(for_type(t.item_type), max_size=2)
    if isinstance(t, mi.DictType):
        return st.dictionaries(TEXT, for_type(t.value_type), max_size=2)
    if isinstance(t, mi.UnionType):
        return st.one_of([for_type(member) for member in t.types])
    if isinstance(t, mi.StructType):
        return st.deferred(lambda: for_struct(t.cls))
    if isinstance(t, mi.CustomType) and issubclass(t.cls, ResolvedUnion):
        return for_resolved_union(t.cls)
    raise NotImplementedError(f"no strategy for {t!r}")


def for_resolved_union(union: type[ResolvedUnion]) -> st.SearchStrategy[Any]:
    choices = []
    for member in union.members():
        info = mi.type_info(member)
        strategy = for_type(info)
        if union.discriminator is not None and isinstance(info, mi.StructType):
            # A value must say which member it is the way the protocol does (2026 resultType).
            choices.append(_discriminated(strategy, info, union.discriminator))
        else:
            choices.append(strategy)
    return st.one_of(choices)


def _discriminated(
    strategy: st.SearchStrategy[Any], info: mi.StructType, discriminator: tuple[str, dict[str, str]]
) -> st.SearchStrategy[Any]:
    key, values = discriminator
    attr = next(f.name for f in info.fields if f.encode_name == key)
    own = [value for value, name in values.items() if name == info.cls.__name__]
    if own:
        return strategy.map(lambda v: msgspec.structs.replace(v, **{attr: own[0]}))
    return strategy.filter(lambda v: getattr(v, attr) not in values)


@cache
def for_struct(cls: type[msgspec.Struct]) -> st.SearchStrategy[Any]:
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    fields: dict[str, st.SearchStrategy[Any]] = {}
    for field in info.fields:
        value = for_type(field.type)
        if field.required:
            fields[field.name] = value
        elif field.default is not msgspec.NODEFAULT:  # a member that always goes on the wire
            fields[field.name] = st.just(field.default) | value
        else:
            fields[field.name] = st.just(msgspec.UNSET) | value
    return st.builds(cls, **fields)


def _structs(version: str) -> list[type[msgspec.Struct]]:
    module = load(version).structs
    return [
        getattr(module, name)
        for name in sorted(module.__all__)
        if isinstance(getattr(module, name), type) and issubclass(getattr(module, name), msgspec.Struct)
    ]


def _round_trip(value: msgspec.Struct) -> None:
    encoded = msgspec.json.encode(value)
    decoded = decode(encoded, type(value))
    assert type(decoded) is type(value)
    # Untagged unions may legitimately decode an ambiguous value as another member, so the
    # promise is about the wire: nothing is lost or changed.
    assert json.loads(msgspec.json.encode(decoded)) == json.loads(encoded)


PROPERTY_SETTINGS = settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("version", [pin.version for pin in load_pins()])
@PROPERTY_SETTINGS
@given(data=st.data())
def test_any_struct_round_trips(version: str, data: st.DataObject) -> None:
    _round_trip(data.draw(st.sampled_from(_structs(version)).flatmap(for_struct)))


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_method_params_and_results_2025_06_18(data: st.DataObject) -> None:
    methods = load("2025-06-18").methods
    spec = data.draw(st.sampled_from(sorted(methods.REQUESTS.values(), key=lambda s: s.method)))
    params = data.draw(for_type(mi.type_info(spec.params_type)))
    result = data.draw(for_type(mi.type_info(spec.result_type)))
    assert json.loads(msgspec.json.encode(spec.decode_params(msgspec.json.encode(params)))) == json.loads(
        msgspec.json.encode(params)
    )
    assert json.loads(msgspec.json.encode(spec.decode_result(msgspec.json.encode(result)))) == json.loads(
        msgspec.json.encode(result)
    )
