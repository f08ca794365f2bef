"""Nothing in a schema is lost: the generated types are checked against the raw schema JSON.

The walk below reads each pinned schema.json as published (not the generator's model of it):
every property of every object must be a member of the generated struct (by wire name), and
every ``anyOf`` / ``oneOf`` member must be a distinct type of the generated union. A synthetic
schema with two inline objects under one ``oneOf`` (the shape that once generated
``pricing: ToolPricing | ToolPricing``) proves both variants get a type of their own and decode.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

import msgspec
import pytest

from codegen.emit import structs_module
from codegen.model import build_model
from codegen.pins import Pin, load_pins, local_schema
from mcpbind.protocol.unions import ResolvedUnion, decode
from mcpbind.schema import load

PINS = load_pins()


class Coverage:
    """Checks one generated module against the raw schema it was generated from."""

    def __init__(self, schema: dict[str, Any], module: types.ModuleType) -> None:
        self.key = "$defs" if "$defs" in schema else "definitions"
        self.defs: dict[str, Any] = schema[self.key]
        self.module = module

    def problems(self) -> list[str]:
        out: list[str] = []
        for name, raw in self.defs.items():
            where = f"#/{self.key}/{name}"
            if not hasattr(self.module, name):
                out.append(f"{where}: no generated name {name}")
                continue
            out += self.check(raw, [getattr(self.module, name)], where)
        return out

    # A generated type as the list of alternatives it admits (unions and resolved unions opened).
    def alternatives(self, tp: Any) -> list[Any]:
        if isinstance(tp, type) and issubclass(tp, ResolvedUnion):
            return [a for m in tp.members() for a in self.alternatives(m)]
        if get_origin(tp) in (Union, types.UnionType):
            return [a for arg in get_args(tp) for a in self.alternatives(arg)]
        if tp is msgspec.UnsetType:
            return []
        return [tp]

    def resolve(self, raw: Any) -> Any:
        while isinstance(raw, dict) and "$ref" in raw:
            raw = self.defs[raw["$ref"].rsplit("/", 1)[-1]]
        return raw

    def merged(self, raw: dict[str, Any]) -> dict[str, Any]:
        """An ``allOf`` as one object: the properties of every part."""
        out: dict[str, Any] = {k: v for k, v in raw.items() if k != "allOf"}
        properties: dict[str, Any] = dict(out.get("properties", {}))
        for part in raw["allOf"]:
            part = self.resolve(part)
            if "allOf" in part:
                part = self.merged(part)
            properties.update(part.get("properties", {}))
        out["properties"] = properties
        out.setdefault("type", "object")
        return out

    def check(self, raw: Any, types_: list[Any], where: str) -> list[str]:
        """What of ``raw`` the generated alternatives ``types_`` fail to represent."""
        alts = [a for t in types_ for a in self.alternatives(t)]
        if raw is True or raw == {} or Any in alts:
            return []
        if not isinstance(raw, dict):
            return [f"{where}: unexpected schema {raw!r}"]
        if "allOf" in raw:
            return self.check(self.merged(raw), alts, where)
        if "$ref" in raw:
            name = raw["$ref"].rsplit("/", 1)[-1]
            needed = self.alternatives(getattr(self.module, name, None))
            if all(n in alts for n in needed) or (self.is_object(self.resolve(raw)) and self.dicts(alts)):
                return []
            return [f"{where}: {name} is not among {alts}"]
        for key in ("anyOf", "oneOf"):
            if key in raw:
                return self.check_union(raw[key], alts, f"{where}/{key}")
        if "const" in raw:
            return [] if self.literal(raw["const"], alts) else [f"{where}: no Literal[{raw['const']!r}]"]
        if "enum" in raw:
            missing = [v for v in raw["enum"] if not self.literal(v, alts)]
            return [f"{where}: enum values {missing} missing"] if missing else []
        kinds = raw.get("type")
        if isinstance(kinds, list):
            return [p for k in kinds for p in self.check({**raw, "type": k}, alts, where)]
        scalar: dict[str, list[type]] = {
            "string": [str],
            "integer": [int],
            "number": [int, float],
            "boolean": [bool],
            "null": [type(None)],
        }
        if kinds in scalar:
            missing_types = [t for t in scalar[kinds] if t not in alts]
            return [f"{where}: {kinds} is not among {alts}"] if missing_types else []
        if kinds == "array":
            lists = [a for a in alts if get_origin(a) is list]
            fits = [
                a for a in lists if not self.check(raw.get("items", {}), list(get_args(a)), where + "/items")
            ]
            return [] if fits else [f"{where}: no list type holds the items ({lists})"]
        if self.is_object(raw):
            return self.check_object(raw, alts, where)
        return []

    @staticmethod
    def is_object(raw: Any) -> bool:
        return isinstance(raw, dict) and (raw.get("type") == "object" or "properties" in raw)

    @staticmethod
    def dicts(alts: list[Any]) -> list[Any]:
        return [a for a in alts if a is dict or get_origin(a) is dict]

    @staticmethod
    def literal(value: Any, alts: list[Any]) -> bool:
        return any(get_origin(a) is Literal and value in get_args(a) for a in alts) or type(value) in alts

    def check_union(self, members: list[Any], alts: list[Any], where: str) -> list[str]:
        """Each member is represented, and no two object members share one generated struct."""
        out: list[str] = []
        used: set[type] = set()
        for i, member in enumerate(members):
            site = f"{where}/{i}"
            inline_object = self.is_object(member) and member.get("properties") and "$ref" not in member
            if not inline_object:
                out += self.check(member, alts, site)
                continue
            structs = [a for a in alts if isinstance(a, type) and issubclass(a, msgspec.Struct)]
            fits = [s for s in structs if s not in used and not self.check_object(member, [s], site)]
            if fits:
                used.add(fits[0])
            elif not self.dicts(alts):
                out.append(f"{site}: no struct of its own among {alts} holds this inline object")
        return out

    def check_object(self, raw: dict[str, Any], alts: list[Any], where: str) -> list[str]:
        properties: dict[str, Any] = raw.get("properties", {})
        if self.dicts(alts):
            # An open object (dict) keeps every key; additionalProperties types its values.
            addl = raw.get("additionalProperties")
            typed = [a for a in self.dicts(alts) if get_args(a) and get_args(a)[1] is not Any]
            if isinstance(addl, dict) and addl and not properties and typed:
                return self.check(addl, [get_args(typed[0])[1]], where + "/additionalProperties")
            return []
        structs = [a for a in alts if isinstance(a, type) and issubclass(a, msgspec.Struct)]
        failures: list[str] = []
        for struct in structs:
            problems = self.struct_problems(struct, properties, where)
            if not problems:
                return []
            failures += problems
        return failures or [f"{where}: an object, but the generated type is {alts}"]

    def struct_problems(
        self, struct: type[msgspec.Struct], properties: dict[str, Any], where: str
    ) -> list[str]:
        hints = get_type_hints(struct)
        fields = dict(
            zip(struct.__struct_encode_fields__, [hints[a] for a in struct.__struct_fields__], strict=True)
        )
        config = struct.__struct_config__
        out: list[str] = []
        for wire, sub in properties.items():
            if wire == config.tag_field:
                if self.resolve(sub).get("const", config.tag) != config.tag:
                    out.append(f"{where}/properties/{wire}: tag {config.tag!r} differs")
            elif wire not in fields:
                out.append(f"{where}/properties/{wire}: not a member of {struct.__name__}")
            else:
                out += self.check(sub, [fields[wire]], f"{where}/properties/{wire}")
        return out


def _schema_file(pin: Pin) -> Path:
    path = local_schema(pin)
    if path is None:
        pytest.skip(f"schema {pin.version} is not on disk (set MCPBIND_SCHEMA_DIR)")
    return path


@pytest.mark.parametrize("version", [p.version for p in PINS])
def test_every_property_and_union_member_of_the_raw_schema_is_generated(version: str) -> None:
    pin = next(p for p in PINS if p.version == version)
    raw = json.loads(_schema_file(pin).read_bytes())
    assert Coverage(raw, load(version)).problems() == []


def test_the_walk_finds_what_is_missing() -> None:
    """The check above can fail: a member or union member the output lacks is named."""
    pin = next(p for p in PINS if p.version == "2025-06-18")
    raw = json.loads(_schema_file(pin).read_bytes())
    raw["definitions"]["Tool"]["properties"]["price"] = {"type": "number"}
    raw["definitions"]["ClientRequest"]["anyOf"].append({"$ref": "#/definitions/CallToolResult"})
    raw["definitions"]["Tool"]["properties"]["annotations"] = {
        "anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}}, {"type": "string"}]
    }
    problems = Coverage(raw, load("2025-06-18")).problems()
    index = len(raw["definitions"]["ClientRequest"]["anyOf"]) - 1
    assert [p.split(": ", 1)[0] for p in problems] == [
        f"#/definitions/ClientRequest/anyOf/{index}",
        "#/definitions/Tool/properties/annotations/anyOf/0",
        "#/definitions/Tool/properties/annotations/anyOf/1",
        "#/definitions/Tool/properties/price",
    ], problems
    assert "CallToolResult is not among" in problems[0] and "not a member of Tool" in problems[3]


# -- a synthetic schema with inline oneOf variants ---------------------------------------------

PRICED_TOOL: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$defs": {
        "Tool": {
            "description": "A tool that costs money to call.",
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "pricing": {
                    "description": "What one call costs: a flat fee or metered.",
                    "oneOf": [
                        {
                            "type": "object",
                            "properties": {
                                "type": {"const": "flat"},
                                "amount": {"type": "number"},
                                "currency": {"type": "string"},
                            },
                            "required": ["type", "amount"],
                        },
                        {
                            "type": "object",
                            "properties": {
                                "type": {"const": "metered"},
                                "perCall": {"type": "number"},
                                "freeCalls": {"type": "integer"},
                            },
                            "required": ["type", "perCall"],
                        },
                    ],
                },
                "billing": {
                    "description": "How the account is billed (no discriminating member).",
                    "oneOf": [
                        {
                            "type": "object",
                            "properties": {"monthly": {"type": "number"}},
                            "required": ["monthly"],
                        },
                        {
                            "type": "object",
                            "properties": {"yearly": {"type": "number"}, "discount": {"type": "number"}},
                            "required": ["yearly"],
                        },
                    ],
                },
                "plan": {"$ref": "#/$defs/Plan"},
            },
            "required": ["name"],
        },
        "Plan": {
            "description": "A definition that is itself a oneOf of two inline objects.",
            "oneOf": [
                {"type": "object", "properties": {"seats": {"type": "integer"}}, "required": ["seats"]},
                {"type": "object", "properties": {"unlimited": {"const": True}}, "required": ["unlimited"]},
            ],
        },
    },
}


def generate_structs(schema: dict[str, Any], tmp_path: Path, name: str) -> types.ModuleType:
    """Run the generator's model and emitter on ``schema`` and import the structs module."""
    pin = Pin(
        version="2099-01-01",
        repository="example/synthetic",
        commit="0" * 40,
        path="schema.json",
        url="https://example.invalid/schema.json",
        sha256="0" * 64,
        errata=None,
    )
    source = structs_module(pin, build_model(pin.version, schema))
    path = tmp_path / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # get_type_hints resolves the annotations in the module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def priced(tmp_path: Path) -> types.ModuleType:
    return generate_structs(PRICED_TOOL, tmp_path, "synthetic_priced_tool")


def test_two_inline_variants_of_one_property_are_two_types(priced: types.ModuleType) -> None:
    assert Coverage(PRICED_TOOL, priced).problems() == []
    hints = get_type_hints(priced.Tool)
    for member in ("pricing", "billing", "plan"):
        variants = [a for a in Coverage(PRICED_TOOL, priced).alternatives(hints[member])]
        assert len(variants) == 2 and variants[0] is not variants[1], (member, variants)


def test_both_inline_variants_decode(priced: types.ModuleType) -> None:
    flat = decode(b'{"name":"a","pricing":{"type":"flat","amount":2.5,"currency":"EUR"}}', priced.Tool)
    metered = decode(b'{"name":"b","pricing":{"type":"metered","perCall":0.01,"freeCalls":100}}', priced.Tool)
    assert (flat.pricing.amount, flat.pricing.currency) == (2.5, "EUR")
    assert (metered.pricing.per_call, metered.pricing.free_calls) == (0.01, 100)
    assert type(flat.pricing) is not type(metered.pricing)
    monthly = decode(b'{"name":"c","billing":{"monthly":9}}', priced.Tool)
    yearly = decode(b'{"name":"d","billing":{"yearly":90,"discount":0.1}}', priced.Tool)
    assert monthly.billing.monthly == 9
    assert (yearly.billing.yearly, yearly.billing.discount) == (90, 0.1)
    seats = decode(b'{"name":"f","plan":{"seats":5}}', priced.Tool)
    unlimited = decode(b'{"name":"g","plan":{"unlimited":true}}', priced.Tool)
    assert seats.plan.seats == 5 and unlimited.plan.unlimited is True
    assert type(seats.plan) is not type(unlimited.plan)
    # What was received is sent on unchanged.
    for value in (flat, metered, monthly, yearly, seats, unlimited):
        again = decode(msgspec.json.encode(value), priced.Tool)
        assert msgspec.json.encode(again) == msgspec.json.encode(value)
    with pytest.raises(msgspec.ValidationError):
        decode(b'{"name":"e","pricing":{"type":"metered"}}', priced.Tool)
