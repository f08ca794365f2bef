"""The normalizing pre-pass: one schema.json in, a small model of Python declarations out.

Policies (each one a decision about the wire, documented where it is made):

* Every object definition becomes a ``Struct`` named exactly as the definition; an object
  nested inline (``CallToolRequest.params``) is hoisted to a struct named after where it sits
  (``CallToolRequestParams``).
* Open objects keep every key: an object with no ``properties``, one that states
  ``additionalProperties``, and the members named ``_meta``, ``inputSchema`` and
  ``outputSchema`` are ``dict[str, Any]`` where they are used.
* A required constant ``method`` (else ``type``) becomes the struct's msgspec tag; any other
  constant becomes a ``Literal`` field that defaults to its value.
* Unions: members that are all structs tagged on one field with distinct values decode natively.
  Such a union with a ``text`` member is a content-block union: for the type checker it also
  admits ``UnknownContent``. Any other union of structs is a *resolved* union (see
  ``mcpbind.protocol.unions``). Unions of scalars and arrays decode natively.
* ``allOf`` is merged into one object; ``JSONValue`` (recursive) is ``Any``.

Before any of this the schema is audited (``codegen.keywords``): a shape with no binding stops
the build with a :class:`ModelError` naming each place, and every keyword the generator drops
is listed in :attr:`SchemaModel.warnings`.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field
from typing import Any

from codegen.keywords import audit

OPEN_MEMBER_NAMES = frozenset({"_meta", "inputSchema", "outputSchema"})
TAG_FIELDS = ("method", "type")
ANY_JSON_DEFS = frozenset({"JSONValue"})
INPUT_REQUIRED = "InputRequiredResult"
TASK_RESULT = "CreateTaskResult"
RESERVED_ATTRS = frozenset(
    {"int", "float", "str", "bool", "list", "dict", "Any", "Literal", "UnsetType", "UNSET", "field"}
)


class ModelError(Exception):
    """The schema holds a shape this generator has no policy for."""


@dataclass
class FieldDef:
    wire: str
    attr: str
    annotation: str
    required: bool
    default: str | None
    doc: str | None


@dataclass
class StructDef:
    name: str
    doc: str | None
    fields: list[FieldDef]
    tag_field: str | None = None
    tag: str | None = None
    origin: str = ""  # "definition" or the site an inline object was hoisted from


@dataclass
class AliasDef:
    """``name = expr``; ``static`` differs from ``expr`` only for content and resolved unions."""

    name: str
    doc: str | None
    expr: str
    kind: str  # "plain", "content", "resolved"
    members: list[str] = field(default_factory=list)
    deps: set[str] = field(default_factory=set)
    # For a resolved union: (member key, {value: member name}) checked before the structural
    # match; a value outside the mapping rules those members out.
    discriminator: tuple[str, dict[str, str]] | None = None


@dataclass
class MethodDef:
    method: str
    kind: str  # "request" or "notification"
    definition: str
    direction: str  # "CLIENT_TO_SERVER", "SERVER_TO_CLIENT", "BOTH"
    params: str
    params_optional: bool
    result: str | None = None
    embedded: bool = False


@dataclass
class SchemaModel:
    version: str
    structs: dict[str, StructDef]
    aliases: dict[str, AliasDef]
    methods: list[MethodDef]
    batching: bool
    definitions: list[str]
    warnings: list[str] = field(default_factory=list)  # keywords dropped, and where


def pascal(text: str) -> str:
    parts = re.split(r"[^0-9A-Za-z]+", text)
    return "".join(p[:1].upper() + p[1:] for p in parts if p)


def snake(wire: str) -> str:
    name = wire.rsplit("/", 1)[-1].lstrip("$_")
    name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    name = re.sub(r"[^0-9A-Za-z_]+", "_", name).strip("_").lower()
    if not name or name[0].isdigit():
        name = "f_" + name
    if keyword.iskeyword(name) or name in RESERVED_ATTRS:
        name += "_"
    return name


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _py_literal(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, (int, float)):
        return repr(value)
    raise ModelError(f"unsupported constant {value!r}")


class Builder:
    def __init__(self, version: str, schema: dict[str, Any]) -> None:
        self.version = version
        checked = audit(schema)
        if checked.errors:
            raise ModelError("unsupported schema shapes:\n  " + "\n  ".join(checked.errors))
        self.warnings = checked.warnings()
        key = "$defs" if "$defs" in schema else "definitions"
        self.ref_prefix = f"#/{key}/"
        self._raw: dict[str, Any] = schema[key]
        self.defs: dict[str, Any] = {name: self._merge_all_of(d) for name, d in self._raw.items()}
        self.structs: dict[str, StructDef] = {}
        self.aliases: dict[str, AliasDef] = {}
        self._struct_schemas: dict[str, dict[str, Any]] = {}  # each struct's object schema
        self._inherit_meta()

    def _inherit_meta(self) -> None:
        """Give every message's params and every result the ``_meta`` of its base type.

        The older schemas declare ``_meta`` (with ``progressToken``) only on the base
        ``Request.params`` / ``Notification.params`` / ``Result``, and JSON Schema's open
        objects let it through; a closed struct would drop it, so each concrete one gets it.
        """
        for unions, base in (
            (("ClientRequest", "ServerRequest", "InputRequest"), "Request"),
            (("ClientNotification", "ServerNotification"), "Notification"),
        ):
            # 2025-11-25 and later name the base params (RequestParams); earlier ones inline them.
            base_params = (
                self._object({"$ref": self.ref_prefix + base + "Params"})
                if base + "Params" in self.defs
                else None
            )
            base_params = base_params or self._object(
                self.defs.get(base, {}).get("properties", {}).get("params")
            )
            meta = (base_params or {}).get("properties", {}).get("_meta")
            if meta is None:
                continue
            for union in unions:
                for member in self._union_refs(union):
                    for params in self._objects(self.defs[member].get("properties", {}).get("params")):
                        self._add_meta(params, meta)
        result_meta = self.defs.get("Result", {}).get("properties", {}).get("_meta")
        if result_meta is not None:
            for union in ("ClientResult", "ServerResult", "InputResponse"):
                for member in self._union_refs(union) if "anyOf" in self.defs.get(union, {}) else []:
                    for result in self._objects({"$ref": self.ref_prefix + member}):
                        self._add_meta(result, result_meta)

    def _objects(self, schema: Any) -> list[dict[str, Any]]:
        """The object schemas ``schema`` stands for: itself, or each member of its union."""
        while isinstance(schema, dict) and "$ref" in schema:
            schema = self.defs[self.ref_name(schema["$ref"])]
        if isinstance(schema, dict) and ("anyOf" in schema or "oneOf" in schema):
            return [o for m in schema.get("anyOf") or schema["oneOf"] for o in self._objects(m)]
        single = self._object(schema)
        return [single] if single is not None else []

    def _object(self, schema: Any) -> dict[str, Any] | None:
        while isinstance(schema, dict) and "$ref" in schema:
            schema = self.defs[self.ref_name(schema["$ref"])]
        if isinstance(schema, dict) and schema.get("properties"):
            return schema
        return None

    @staticmethod
    def _add_meta(target: dict[str, Any], meta: dict[str, Any]) -> None:
        if "_meta" not in target["properties"]:
            target["properties"] = {"_meta": meta, **target["properties"]}

    # -- pre-pass -------------------------------------------------------------------------

    def ref_name(self, ref: str) -> str:
        if not ref.startswith(self.ref_prefix):
            raise ModelError(f"unsupported $ref {ref}")
        return ref[len(self.ref_prefix) :]

    def _merge_all_of(self, schema: Any) -> Any:
        if not isinstance(schema, dict):
            return schema
        out = {k: self._merge_all_of(v) if isinstance(v, dict) else v for k, v in schema.items()}
        for key in ("properties",):
            if key in out:
                out[key] = {p: self._merge_all_of(s) for p, s in out[key].items()}
        if "allOf" not in out:
            return out
        parts = out.pop("allOf")
        merged: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
        for part in parts:
            part = self._merge_all_of(part)
            while "$ref" in part:
                part = self._merge_all_of(self._raw_lookup(part["$ref"]))
            for prop, sub in part.get("properties", {}).items():
                previous = merged["properties"].get(prop)
                merged["properties"][prop] = {**previous, **sub} if previous and "$ref" not in sub else sub
            merged["required"] += [r for r in part.get("required", []) if r not in merged["required"]]
            # additionalProperties is not carried over: an object that names its members
            # (``GetTaskResult = Result & Task``) is a struct, not an open bag.
        merged.update({k: v for k, v in out.items() if k not in ("type",)})
        return merged

    def _raw_lookup(self, ref: str) -> Any:
        return self._raw[self.ref_name(ref)]

    # -- classification -------------------------------------------------------------------

    def is_open_object(self, schema: dict[str, Any]) -> bool:
        if schema.get("type") != "object" and "properties" not in schema:
            return False
        if not schema.get("properties"):
            return True
        addl = schema.get("additionalProperties")
        return addl is True or (isinstance(addl, dict))

    def struct_tag(self, schema: dict[str, Any]) -> tuple[str, Any] | None:
        required = set(schema.get("required", []))
        for name in TAG_FIELDS:
            prop = schema.get("properties", {}).get(name)
            if prop is not None and name in required and "const" in prop and isinstance(prop["const"], str):
                return name, prop["const"]
        return None

    # -- type expressions -----------------------------------------------------------------

    def texpr(self, schema: Any, site: str, member: str | None = None, origin: str | None = None) -> str:
        """The annotation for ``schema``; an inline object is hoisted to a struct named ``site``."""
        origin = origin or site
        if schema is True or schema == {}:
            return "Any"
        if not isinstance(schema, dict):
            raise ModelError(f"{site}: unsupported schema {schema!r}")
        if member in OPEN_MEMBER_NAMES:
            return "dict[str, Any]"
        if "$ref" in schema:
            name = self.ref_name(schema["$ref"])
            target = self.defs[name]
            if name in ANY_JSON_DEFS:
                return "Any"
            if self.is_open_object(target) and target.get("properties"):
                return "dict[str, Any]"
            return name
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return self.union_expr(schema[key], site, origin=f"{origin}.{key}")
        if "const" in schema:
            return f"Literal[{_py_literal(schema['const'])}]"
        if "enum" in schema:
            return "Literal[" + ", ".join(_py_literal(v) for v in schema["enum"]) + "]"
        kind = schema.get("type")
        if isinstance(kind, list):
            parts: list[str] = []
            for k in kind:
                expr = self.texpr({**schema, "type": k}, site)
                parts += ["int", "float"] if expr == "int | float" else [expr]
            return " | ".join(dict.fromkeys(parts))  # "integer" and "number" give int once
        if kind == "string":
            return "str"
        if kind == "integer":
            return "int"
        if kind == "number":
            # A JSON number may be written as an integer: keep 30 an int and 95.5 a float, so
            # that what is received is sent on unchanged (msgspec would make 30 into 30.0).
            return "int | float"
        if kind == "boolean":
            return "bool"
        if kind == "null":
            return "None"
        if kind == "array":
            return f"list[{self.texpr(schema.get('items', {}), site + 'Item', origin=origin + '[]')}]"
        if kind == "object" or "properties" in schema:
            if self.is_open_object(schema):
                addl = schema.get("additionalProperties")
                if schema.get("properties") or not isinstance(addl, dict) or addl == {}:
                    return "dict[str, Any]"
                return f"dict[str, {self.texpr(addl, site + 'Value', origin=origin + '{}')}]"
            return self.hoist(site, schema, origin)
        if not kind:
            return "Any"
        raise ModelError(f"{site}: unsupported schema {schema!r}")

    def hoist(self, site: str, schema: dict[str, Any], origin: str) -> str:
        """The struct for the inline object ``schema`` found at ``site``, defined on first use.

        Each distinct inline object gets a struct of its own: a name already taken by another
        definition, alias or inline object gets ``Object`` appended, then a number.
        """
        name = site
        if name in self.defs and self.defs[name] is not schema:
            name = site + "Object"
        candidates = iter(f"{name}{n}" for n in range(2, 1000))
        while True:
            taken_by = self._struct_schemas.get(name)
            if taken_by is schema or (taken_by is not None and taken_by == schema):
                return name  # the same object, met again (a method's params, a merged base)
            if (
                taken_by is None
                and name not in self.aliases
                and (name not in self.defs or self.defs[name] is schema)
            ):
                break
            name = next(candidates)
        self.define_struct(name, schema, origin=origin)
        return name

    def is_inline_struct(self, member: Any) -> bool:
        """Whether ``member`` is an object written in place that becomes a struct of its own."""
        return (
            isinstance(member, dict)
            and "$ref" not in member
            and "anyOf" not in member
            and "oneOf" not in member
            and (member.get("type") == "object" or "properties" in member)
            and bool(member.get("properties"))
            and not self.is_open_object(member)
        )

    def _is_union_ref(self, member: Any) -> bool:
        if not (isinstance(member, dict) and "$ref" in member):
            return False
        name = self.ref_name(member["$ref"])
        target = self.defs[name]
        return ("anyOf" in target or "oneOf" in target) and name not in ANY_JSON_DEFS

    def _inline_sites(self, members: list[Any], site: str) -> dict[int, str]:
        """Names for the inline objects among one union's ``members``, by position.

        A lone inline object is named after its site (``CallToolRequestParams``). Two or more,
        or one beside referenced structs, are each named after their tag value when they all
        have distinct ones (``ToolPricingFlat``, ``ToolPricingMetered``), else numbered
        (``ToolBilling1``, ``ToolBilling2``): each variant is a type of its own.
        """
        inline = [i for i, m in enumerate(members) if self.is_inline_struct(m)]
        if not inline:
            return {}
        refs = [
            m
            for m in members
            if self._is_union_ref(m) or (isinstance(m, dict) and "$ref" in m and self._is_struct_ref(m))
        ]
        if len(inline) == 1 and not refs:
            return {inline[0]: site}
        tags = [self.struct_tag(members[i]) for i in inline]
        suffixes = [pascal(str(t[1])) if t is not None else "" for t in tags]
        if not all(suffixes) or len(set(suffixes)) != len(suffixes):
            suffixes = [str(n) for n in range(1, len(inline) + 1)]
        return {i: site + s for i, s in zip(inline, suffixes, strict=True)}

    def flatten(self, members: list[Any], site: str, origin: str) -> list[tuple[Any, str | None, str]]:
        """Expand members that refer to other union definitions, keeping first occurrences.

        Each member comes with the name its struct gets when it is an inline object (named
        where it is written: a member of another union definition keeps that definition's
        naming) and where it sits in the schema.
        """
        out: list[tuple[Any, str | None, str]] = []
        sites = self._inline_sites(members, site)
        for i, member in enumerate(members):
            if self._is_union_ref(member):
                name = self.ref_name(member["$ref"])
                target = self.defs[name]
                key = "anyOf" if "anyOf" in target else "oneOf"
                for entry in self.flatten(target[key], name, f"{name}.{key}"):
                    if all(entry[0] != seen for seen, _, _ in out):
                        out.append(entry)
                continue
            if all(member != seen for seen, _, _ in out):
                out.append((member, sites.get(i), f"{origin}[{i}]"))
        return out

    def union_expr(
        self, members: list[Any], site: str, alias_name: str | None = None, origin: str | None = None
    ) -> str:
        flat = self.flatten(members, site, origin or site)
        nullable = any(isinstance(m, dict) and m.get("type") == "null" for m, _, _ in flat)
        flat = [
            entry for entry in flat if not (isinstance(entry[0], dict) and entry[0].get("type") == "null")
        ]
        suffix = " | None" if nullable else ""
        exprs: list[str] = []
        structs: list[str] = []  # the struct members' names, referenced or hoisted
        schemas: list[dict[str, Any]] = []
        inline = False
        for member, hoist_name, member_origin in flat:
            if isinstance(member, dict) and "$ref" in member and self._is_struct_ref(member):
                name = self.ref_name(member["$ref"])
                schemas.append(self.defs[name])
            elif hoist_name is not None:
                name = self.hoist(hoist_name, member, member_origin)
                schemas.append(member)
                inline = True
            else:
                exprs.append(self.texpr(member, site))
                continue
            structs.append(name)
            exprs.append(name)
        others = len(exprs) > len(structs)
        if len(structs) <= 1:
            return " | ".join(exprs) + suffix
        tags = [self.struct_tag(s) for s in schemas]
        tagged = (
            all(t is not None for t in tags)
            and len({t[0] for t in tags if t is not None}) == 1
            and len({t[1] for t in tags if t is not None}) == len(tags)
        )
        name = alias_name or (site if others or inline else "Or".join(structs))
        if tagged and any(t is not None and t == ("type", "text") for t in tags):
            self._alias(name, None, " | ".join(exprs), "content", exprs)
            return name + suffix
        if tagged:
            return " | ".join(exprs) + suffix
        self._alias(name, None, " | ".join(exprs), "resolved", exprs)
        if INPUT_REQUIRED in exprs:
            # 2026-07-28: a result's resultType says whether it is final or asks for input.
            self.aliases[name].discriminator = ("resultType", {"input_required": INPUT_REQUIRED})
        return name + suffix

    def _is_struct_ref(self, schema: dict[str, Any]) -> bool:
        name = self.ref_name(schema["$ref"])
        target = self.defs[name]
        return (target.get("type") == "object" or "properties" in target) and bool(target.get("properties"))

    def _alias(
        self, name: str, doc: str | None, expr: str, kind: str, members: list[str] | None = None
    ) -> None:
        existing = self.aliases.get(name)
        if existing is not None:
            if existing.expr != expr:
                raise ModelError(f"alias {name} defined twice differently")
            if doc and not existing.doc:
                existing.doc = doc
            return
        if name in self.structs:
            raise ModelError(f"alias {name} collides with a struct")
        deps = set(re.findall(r"\b[A-Z][A-Za-z0-9]*\b", expr)) - {"Any", "Literal", "None"}
        self.aliases[name] = AliasDef(name, doc, expr, kind, members or [], deps)

    # -- definitions ----------------------------------------------------------------------

    def define_struct(self, name: str, schema: dict[str, Any], origin: str = "definition") -> None:
        struct = StructDef(name=name, doc=schema.get("description"), fields=[], origin=origin)
        self.structs[name] = struct
        self._struct_schemas[name] = schema
        tag = self.struct_tag(schema)
        if tag is not None:
            struct.tag_field, struct.tag = tag
        required = set(schema.get("required", []))
        seen: dict[str, str] = {}
        for wire, prop in schema.get("properties", {}).items():
            if tag is not None and wire == tag[0]:
                continue
            attr = snake(wire)
            if attr in seen:
                raise ModelError(f"{name}: members {seen[attr]!r} and {wire!r} map to one attribute {attr!r}")
            seen[attr] = wire
            is_required = wire in required
            doc = prop.get("description") if isinstance(prop, dict) else None
            default: str | None
            if isinstance(prop, dict) and "const" in prop:
                annotation = f"Literal[{_py_literal(prop['const'])}]"
                default = _py_literal(prop["const"]) if is_required else "UNSET"
            else:
                annotation = self.texpr(prop, name + pascal(wire), member=wire, origin=f"{name}.{wire}")
                default = None if is_required else "UNSET"
                if (
                    not is_required
                    and isinstance(prop, dict)
                    and "default" in prop
                    and _is_scalar(prop["default"])
                ):
                    default = _py_literal(prop["default"])  # absent on the wire means this value
            if default == "UNSET":
                annotation += " | UnsetType"
            struct.fields.append(FieldDef(wire, attr, annotation, is_required, default, doc))

    def define(self, name: str, schema: dict[str, Any]) -> None:
        doc = schema.get("description")
        if name in ANY_JSON_DEFS:
            self._alias(name, doc, "Any", "plain")
            return
        for key in ("anyOf", "oneOf"):
            if key in schema:
                expr = self.union_expr(schema[key], name, alias_name=name, origin=f"{name}.{key}")
                if expr != name:
                    self._alias(name, doc, expr, "plain")
                elif doc:
                    self.aliases[name].doc = doc
                return
        if "$ref" in schema:
            self._alias(name, doc, self.ref_name(schema["$ref"]), "plain")
            return
        if (schema.get("type") == "object" or "properties" in schema) and schema.get("properties"):
            if name not in self.structs:
                self.define_struct(name, schema)
            return
        self._alias(name, doc, self.texpr(schema, name), "plain")

    def build(self) -> None:
        for name in sorted(self.defs):
            self.define(name, self.defs[name])

    # -- method table ---------------------------------------------------------------------

    def _union_refs(self, name: str) -> list[str]:
        schema = self.defs.get(name)
        if schema is None:
            return []
        if "anyOf" in schema:
            return [self.ref_name(m["$ref"]) for m in schema["anyOf"]]
        method = schema.get("properties", {}).get("method", {}).get("const")
        if method is None:
            raise ModelError(f"{name} is neither a union nor a single message")
        matches = [
            n
            for n, d in self.defs.items()
            if n != name and d.get("properties", {}).get("method", {}).get("const") == method
        ]
        if len(matches) != 1:
            raise ModelError(f"{name}: cannot find the definition of {method}")
        return matches

    def methods(self) -> list[MethodDef]:
        client_requests = self._union_refs("ClientRequest")
        server_requests = self._union_refs("ServerRequest")
        embedded = set()
        if not server_requests:
            server_requests = self._union_refs("InputRequest")
            embedded = set(server_requests)
        client_notes = self._union_refs("ClientNotification")
        server_notes = self._union_refs("ServerNotification")
        out: list[MethodDef] = []
        for kind, client_side, server_side in (
            ("request", client_requests, server_requests),
            ("notification", client_notes, server_notes),
        ):
            for definition in sorted(set(client_side) | set(server_side)):
                both = definition in client_side and definition in server_side
                direction = (
                    "BOTH"
                    if both
                    else ("CLIENT_TO_SERVER" if definition in client_side else "SERVER_TO_CLIENT")
                )
                schema = self.defs[definition]
                method = schema["properties"]["method"]["const"]
                params_schema = schema["properties"].get("params", {"type": "object"})
                params = self.texpr(
                    params_schema, definition + "Params", member="params", origin=f"{definition}.params"
                )
                optional = "params" not in schema.get("required", [])
                if (
                    optional
                    and params in self.structs
                    and any(f.required for f in self.structs[params].fields)
                ):
                    raise ModelError(f"{definition}: optional params with required members")
                entry = MethodDef(
                    method, kind, definition, direction, params, optional, embedded=definition in embedded
                )
                if kind == "request":
                    entry.result = self._result_for(definition)
                out.append(entry)
        return out

    def _result_for(self, request_def: str) -> str:
        base = request_def.removesuffix("Request")
        response = self.defs.get(base + "ResultResponse")
        if response is not None:
            return self.texpr(response["properties"]["result"], base + "ResultResponseResult")
        if base + "Result" in self.defs:
            result = {"$ref": self.ref_prefix + base + "Result"}
            params = self._objects(self.defs[request_def]["properties"].get("params"))
            if TASK_RESULT in self.defs and any("task" in p["properties"] for p in params):
                # 2025-11-25: a request augmented with ``task`` is answered with a CreateTaskResult.
                return self.union_expr([result, {"$ref": self.ref_prefix + TASK_RESULT}], base + "Result")
            return self.texpr(result, base + "Result")
        if "EmptyResult" in self.defs:
            return "EmptyResult"
        raise ModelError(f"{request_def}: no result type")


def build_model(version: str, schema: dict[str, Any]) -> SchemaModel:
    builder = Builder(version, schema)
    builder.build()
    methods = builder.methods()
    return SchemaModel(
        version=version,
        structs=builder.structs,
        aliases=builder.aliases,
        methods=methods,
        batching="JSONRPCBatchRequest" in builder.defs,
        definitions=sorted(builder.defs),
        warnings=builder.warnings,
    )
