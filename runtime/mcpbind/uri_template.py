"""RFC 6570 URI templates for MCP resource templates: expansion and matching.

``ResourceTemplate.uriTemplate`` is an RFC 6570 URI template.  A server needs to
expand one (:meth:`UriTemplate.expand`, all of levels 1-4) and to match the
concrete URI of a ``resources/read`` request against its templates and recover
the variables (:meth:`UriTemplate.match`).

Expansion follows RFC 6570 exactly (appendix A): operators none, ``+``, ``#``,
``.``, ``/``, ``;``, ``?`` and ``&``; the prefix modifier ``:N`` and explode
``*``; string (and int/float, formatted with ``str``), list/tuple and mapping
(associative array) values; ``None``, empty lists and empty mappings are
undefined and skipped.  Values are UTF-8 percent-encoded: only unreserved
characters pass through, except for ``+`` and ``#`` where reserved characters
and existing ``%XX`` triplets pass through too.  Literal text outside of
expressions is copied, with characters not allowed in a URI percent-encoded.

Matching
--------
``match(uri)`` compiles the template to one regular expression at construction
and returns the variables (percent-decoded) or ``None``.  The policy:

* The whole URI must match (no trailing text).  Literals match their expanded
  (percent-encoded) form, case-sensitively.
* Non-exploded variables come back as ``str`` (a non-exploded list such as
  ``{list}`` -> ``red,green,blue`` comes back as the string ``"red,green,blue"``);
  exploded variables (``{/seg*}``, ``{?tag*}``, ...) come back as ``list[str]``.
  Associative arrays are never reconstructed: an exploded mapping matched by a
  non-query operator comes back as a list of ``"key=value"`` strings, and
  exploded mappings in ``;``/``?``/``&`` expressions do not match (their keys
  are not known in advance).
* Characters each operator's value may contain (raw or percent-encoded; raw
  characters are accepted leniently even where expansion would have encoded
  them):

  - ``{var}``: anything but ``/ ? #`` (and ``,`` when the expression has more
    than one variable or the variable is exploded, where ``,`` separates);
  - ``{+var}`` and ``{#var}``: anything (``/``, ``?``, ``#`` included);
  - ``{.var}``: anything but ``. / ? #`` (so ``{name}{.ext}`` takes the last
    label as ``ext``);
  - ``{/var}``: anything but ``/ ? #``; ``{/var*}`` matches zero or more
    ``/segment`` s;
  - ``{;x}``: ``;x`` or ``;x=value``, value anything but ``; / ? #``;
  - ``{?x,y}`` / ``{&x}``: ``name=value`` pairs, value anything but ``& #``.

* Query expressions are order-independent: ``{?a,b}`` matches ``?b=2&a=1``.
  Consecutive ``{?...}{&...}`` expressions form one query whose pairs may come
  in any order (and it may start with ``?`` or ``&``).  Every variable of a
  query is optional.  Parameter names not in the template make the match
  fail, as does a repeated non-exploded parameter.  ``a`` without ``=`` is the
  empty string.  ``+`` is not decoded to a space.
* Undefined variables are skipped by expansion, so in multi-variable
  expressions (``{x,y}``, ``{/a,b}``, ``{.a,b}``, ``{;x,y}``) every variable is
  optional and values are assigned positionally from the left: ``{x,y}``
  matched against ``1024`` gives ``{"x": "1024"}``.  Variables that are absent
  from the URI are absent from the result.  For ``{var}`` / ``{+var}`` an empty
  match gives ``""``; an exploded variable that matched nothing is absent.
* Ambiguity (adjacent variables with no literal between them, ``{+path}``
  followed by an optional query, ...) is resolved **leftmost-shortest**: every
  variable takes the shortest value that still lets the rest of the template
  match the rest of the URI, from left to right.  So ``{a}{b}`` against ``xyz``
  gives ``a=""`` and ``b="xyz"``, and ``file:///{+path}{?q}`` against
  ``file:///a/b?q=1`` gives ``path="a/b"``, ``q="1"``.
* A prefix variable ``{var:N}`` matches at most N characters (counted after
  percent-decoding, UTF-8 aware).  A variable used more than once must be
  consistent; a prefixed occurrence must be a prefix of the full one
  (``{/var:1,var}`` against ``/v/value`` gives ``var="value"``).
* Values are percent-decoded as UTF-8; invalid UTF-8 makes the match fail.
  For ``+``/``#`` expansion passes existing ``%XX`` triplets through, so a
  value containing ``%`` does not round-trip through ``{+var}``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeAlias
from urllib.parse import unquote

__all__ = ["MatchResult", "ScalarValue", "UriTemplate", "VariableValue"]

ScalarValue: TypeAlias = "str | int | float"
VariableValue: TypeAlias = (
    "str | int | float | Sequence[str | int | float] | Mapping[str, str | int | float] | None"
)
MatchResult: TypeAlias = "dict[str, str | list[str]]"

_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_RESERVED = frozenset(":/?#[]@!$&'()*+,;=")
_HEX = frozenset("0123456789abcdefABCDEF")
_VARCHAR = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")

# One character, percent-encoded as UTF-8 (1 to 4 triplets).
_PCT_CHAR = (
    r"(?:%[0-7][0-9A-Fa-f]"
    r"|%[CDcd][0-9A-Fa-f]%[89ABab][0-9A-Fa-f]"
    r"|%[Ee][0-9A-Fa-f](?:%[89ABab][0-9A-Fa-f]){2}"
    r"|%[Ff][0-7](?:%[89ABab][0-9A-Fa-f]){3})"
)


@dataclass(frozen=True, slots=True)
class _Operator:
    char: str
    first: str
    sep: str
    named: bool
    ifemp: str
    allow_reserved: bool


_OPERATORS: dict[str, _Operator] = {
    "": _Operator("", "", ",", False, "", False),
    "+": _Operator("+", "", ",", False, "", True),
    "#": _Operator("#", "#", ",", False, "", True),
    ".": _Operator(".", ".", ".", False, "", False),
    "/": _Operator("/", "/", "/", False, "", False),
    ";": _Operator(";", ";", ";", True, "", False),
    "?": _Operator("?", "?", "&", True, "=", False),
    "&": _Operator("&", "&", "&", True, "=", False),
}
_RESERVED_OPERATORS = frozenset("=,!@|")


@dataclass(frozen=True, slots=True)
class _VarSpec:
    name: str
    prefix: int | None
    explode: bool


@dataclass(frozen=True, slots=True)
class _Expression:
    op: _Operator
    varspecs: tuple[_VarSpec, ...]


@dataclass(frozen=True, slots=True)
class _Capture:
    """How to turn one regex group into a variable value."""

    kind: str  # "str", "list", "params" (;name*), "query"
    group: str
    spec: _VarSpec | None = None
    sep: str = ""
    presence: str | None = None  # group telling a ;name without value apart from absence
    strip_lead: bool = False  # the list text starts with its separator ({/x*}, {.x*})
    query: tuple[_VarSpec, ...] = ()


def _encode(value: str, allow_reserved: bool) -> str:
    out: list[str] = []
    i = 0
    n = len(value)
    while i < n:
        c = value[i]
        if c in _UNRESERVED or (allow_reserved and c in _RESERVED):
            out.append(c)
        elif allow_reserved and c == "%" and i + 2 < n and value[i + 1] in _HEX and value[i + 2] in _HEX:
            out.append(value[i : i + 3])
            i += 3
            continue
        else:
            out.extend(f"%{b:02X}" for b in c.encode("utf-8"))
        i += 1
    return "".join(out)


def _scalar(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return str(value)
    return None


def _decode(text: str) -> str:
    return unquote(text, encoding="utf-8", errors="strict")


class UriTemplate:
    """A parsed RFC 6570 URI template.

    >>> t = UriTemplate("users/{id}/posts{?page,sort}")
    >>> t.expand(id="42", page="2")
    'users/42/posts?page=2'
    >>> t.match("users/42/posts?sort=new&page=2")
    {'id': '42', 'page': '2', 'sort': 'new'}
    """

    __slots__ = ("_captures", "_parts", "_regex", "_template")

    def __init__(self, template: str) -> None:
        self._template = template
        self._parts: tuple[str | _Expression, ...] = tuple(self._parse(template))
        pattern, captures = self._compile()
        self._regex = re.compile(pattern, re.DOTALL)
        self._captures = captures

    # -- parsing ---------------------------------------------------------------

    @staticmethod
    def _parse(template: str) -> list[str | _Expression]:
        parts: list[str | _Expression] = []
        literal: list[str] = []
        i = 0
        n = len(template)
        while i < n:
            c = template[i]
            if c == "}":
                raise ValueError(f"unmatched '}}' at position {i} in URI template {template!r}")
            if c != "{":
                literal.append(c)
                i += 1
                continue
            end = template.find("}", i + 1)
            nested = template.find("{", i + 1)
            if end < 0 or (0 <= nested < end):
                raise ValueError(f"unclosed '{{' at position {i} in URI template {template!r}")
            if literal:
                parts.append("".join(literal))
                literal = []
            parts.append(UriTemplate._parse_expression(template, i + 1, end))
            i = end + 1
        if literal:
            parts.append("".join(literal))
        return parts

    @staticmethod
    def _parse_expression(template: str, start: int, end: int) -> _Expression:
        body = template[start:end]
        if not body:
            raise ValueError(f"empty expression at position {start - 1} in URI template {template!r}")
        op_char = body[0] if body[0] in _OPERATORS and body[0] != "" else ""
        if body[0] in _RESERVED_OPERATORS:
            raise ValueError(
                f"reserved operator {body[0]!r} at position {start} in URI template {template!r}"
            )
        pos = start + len(op_char)
        specs: list[_VarSpec] = []
        for raw in body[len(op_char) :].split(","):
            specs.append(UriTemplate._parse_varspec(template, raw, pos))
            pos += len(raw) + 1
        return _Expression(_OPERATORS[op_char], tuple(specs))

    @staticmethod
    def _parse_varspec(template: str, raw: str, pos: int) -> _VarSpec:
        name = raw
        prefix: int | None = None
        explode = False
        if raw.endswith("*"):
            name = raw[:-1]
            explode = True
        elif ":" in raw:
            name, _, digits = raw.partition(":")
            mpos = pos + len(name)
            if not (1 <= len(digits) <= 4 and digits.isascii() and digits.isdigit() and digits[0] != "0"):
                raise ValueError(
                    f"bad prefix modifier {':' + digits!r} at position {mpos} in URI template {template!r}"
                    " (expected ':' and 1-9999)"
                )
            prefix = int(digits)
        UriTemplate._check_varname(template, name, pos)
        return _VarSpec(name, prefix, explode)

    @staticmethod
    def _check_varname(template: str, name: str, pos: int) -> None:
        def bad(at: int, why: str) -> ValueError:
            return ValueError(
                f"bad variable name {name!r} at position {at} in URI template {template!r}: {why}"
            )

        if not name:
            raise bad(pos, "empty")
        i = 0
        prev_dot = True  # a name may not start with '.'
        while i < len(name):
            c = name[i]
            if c in _VARCHAR:
                prev_dot = False
                i += 1
            elif c == "%":
                if not (i + 2 < len(name) and name[i + 1] in _HEX and name[i + 2] in _HEX):
                    raise bad(pos + i, "'%' not followed by two hex digits")
                prev_dot = False
                i += 3
            elif c == ".":
                if prev_dot:
                    raise bad(pos + i, "misplaced '.'")
                prev_dot = True
                i += 1
            else:
                raise bad(pos + i, f"character {c!r} not allowed")
        if prev_dot:
            raise bad(pos + len(name) - 1, "ends with '.'")

    # -- introspection ---------------------------------------------------------

    @property
    def template(self) -> str:
        """The template text."""
        return self._template

    @property
    def variable_names(self) -> tuple[str, ...]:
        """Names of the variables, in order of first appearance."""
        seen: dict[str, None] = {}
        for part in self._parts:
            if isinstance(part, _Expression):
                for spec in part.varspecs:
                    seen.setdefault(spec.name, None)
        return tuple(seen)

    def __str__(self) -> str:
        return self._template

    def __repr__(self) -> str:
        return f"UriTemplate({self._template!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UriTemplate) and other._template == self._template

    def __hash__(self) -> int:
        return hash(self._template)

    # -- expansion -------------------------------------------------------------

    def expand(self, variables: Mapping[str, VariableValue] | None = None, /, **kwargs: VariableValue) -> str:
        """Expand the template (RFC 6570 levels 1-4).

        Variables come from ``variables`` and/or keyword arguments (keywords
        win).  Raises ``ValueError`` for a prefix modifier on a list or mapping
        and ``TypeError`` for a value of an unsupported type.
        """
        values: dict[str, VariableValue] = dict(variables) if variables is not None else {}
        values.update(kwargs)
        out: list[str] = []
        for part in self._parts:
            if isinstance(part, str):
                out.append(_encode_literal(part))
            else:
                out.append(_expand_expression(part, values))
        return "".join(out)

    # -- matching --------------------------------------------------------------

    def match(self, uri: str) -> MatchResult | None:
        """Return the variables if ``uri`` matches the template, else ``None``.

        See the module docstring for the exact policy.
        """
        m = self._regex.fullmatch(uri)
        if m is None:
            return None
        result: MatchResult = {}
        prefixed: set[str] = set()
        value: str | list[str]
        try:
            for cap in self._captures:
                if cap.kind == "query":
                    text = m.group(cap.group)
                    if not text:
                        continue
                    got = _parse_query(text, cap.query)
                    if got is None:
                        return None
                    for qspec, qvalue in got:
                        if not _merge(result, prefixed, qspec, qvalue):
                            return None
                    continue
                assert cap.spec is not None
                text = m.group(cap.group)
                if cap.kind == "str":
                    if text is None:
                        if cap.presence is None or m.group(cap.presence) is None:
                            continue
                        text = ""
                    value = _decode(text)
                    if cap.spec.prefix is not None and len(value) > cap.spec.prefix:
                        return None
                elif cap.kind == "list":
                    if not text:
                        continue
                    if cap.strip_lead:
                        text = text[len(cap.sep) :]
                    value = [_decode(item) for item in text.split(cap.sep)]
                else:  # ";name*" parameters
                    if not text:
                        continue
                    items: list[str] = []
                    for item in text[1:].split(";"):
                        _, _, val = item.partition("=")
                        items.append(_decode(val))
                    value = items
                if not _merge(result, prefixed, cap.spec, value):
                    return None
        except UnicodeDecodeError:
            return None
        return result

    def _compile(self) -> tuple[str, tuple[_Capture, ...]]:
        pattern: list[str] = []
        captures: list[_Capture] = []
        counter = iter(range(1 << 30))

        def group() -> str:
            return f"g{next(counter)}"

        parts = list(self._parts)
        i = 0
        while i < len(parts):
            part = parts[i]
            if isinstance(part, str):
                pattern.append(re.escape(_encode_literal(part)))
                i += 1
                continue
            op = part.op
            if op.char in ("?", "&"):
                # Gather this and following '&' expressions into one query.
                specs = list(part.varspecs)
                j = i + 1
                while j < len(parts):
                    nxt = parts[j]
                    if not (isinstance(nxt, _Expression) and nxt.op.char == "&"):
                        break
                    specs.extend(nxt.varspecs)
                    j += 1
                names = sorted({re.escape(s.name) for s in specs}, key=len, reverse=True)
                pair = f"(?:{'|'.join(names)})(?:=[^&#]*)?"
                g = group()
                if op.char == "?":
                    start = r"\?" if j == i + 1 else "[?&]"
                    pattern.append(f"(?P<{g}>{start}{pair}(?:&{pair})*)?")
                else:
                    pattern.append(f"(?P<{g}>(?:&{pair})*)")
                captures.append(_Capture("query", g, query=tuple(specs)))
                i = j
                continue
            pattern.append(_compile_expression(part, group, captures))
            i += 1
        return "".join(pattern), tuple(captures)


def _value_class(op: _Operator, multi: bool) -> str:
    """Characters (besides percent-encoded ones) a value may contain, as a class body."""
    if op.char in ("+", "#"):
        return "" if not multi else ","
    if op.char == "":
        return "/?#," if multi else "/?#"
    if op.char == ".":
        return "./?#"
    if op.char == "/":
        return "/?#"
    return ";/?#"  # ';'


def _value_pattern(excluded: str, prefix: int | None) -> str:
    cls = f"[^{re.escape(excluded)}]" if excluded else "."
    if prefix is None:
        return f"{cls}*?"
    raw = f"[^{re.escape(excluded)}%]" if excluded else "[^%]"
    return f"(?:{_PCT_CHAR}|{raw}){{0,{prefix}}}?"


def _compile_expression(expr: _Expression, group: Callable[[], str], captures: list[_Capture]) -> str:
    op = expr.op
    specs = expr.varspecs
    multi = len(specs) > 1
    if op.char in ("", "+", "#"):
        pieces: list[str] = []
        for spec in specs:
            g = group()
            if spec.explode:
                excluded = _value_class(op, False)
                pieces.append(f"(?P<{g}>{_value_pattern(excluded, None)})")
                captures.append(_Capture("list", g, spec, sep=","))
            else:
                excluded = _value_class(op, multi)
                pieces.append(f"(?P<{g}>{_value_pattern(excluded, spec.prefix)})")
                captures.append(_Capture("str", g, spec))
        # Nest: first(?:,second(?:,third)?)?  -- trailing variables optional.
        inner = ""
        for piece in reversed(pieces[1:]):
            inner = f"(?:,{piece}{inner})?"
        body = pieces[0] + inner
        if op.char == "#":
            return f"(?:\\#{body})?"
        return f"(?:{body})?" if multi else body
    if op.char in (".", "/"):
        lead = re.escape(op.char)
        excluded = _value_class(op, multi)
        out: list[str] = []
        for spec in specs:
            g = group()
            if spec.explode:
                out.append(f"(?P<{g}>(?:{lead}[^{re.escape(excluded)}]*)*?)")
                captures.append(_Capture("list", g, spec, sep=op.char, strip_lead=True))
            else:
                out.append(f"(?:{lead}(?P<{g}>{_value_pattern(excluded, spec.prefix)}))?")
                captures.append(_Capture("str", g, spec))
        return "".join(out)
    # ';'
    excluded = _value_class(op, multi)
    out = []
    for spec in specs:
        g = group()
        name = re.escape(spec.name)
        if spec.explode:
            out.append(f"(?P<{g}>(?:;{name}(?:=[^{re.escape(excluded)}]*)?)*?)")
            captures.append(_Capture("params", g, spec))
        else:
            p = group()
            out.append(f"(?P<{p}>;{name}(?:=(?P<{g}>{_value_pattern(excluded, spec.prefix)}))?)?")
            captures.append(_Capture("str", g, spec, presence=p))
    return "".join(out)


def _parse_query(text: str, specs: tuple[_VarSpec, ...]) -> list[tuple[_VarSpec, str | list[str]]] | None:
    by_name = {s.name: s for s in specs}
    singles: dict[str, str] = {}
    lists: dict[str, list[str]] = {}
    for pair in text[1:].split("&"):
        name, _, raw = pair.partition("=")
        spec = by_name.get(name)
        if spec is None:
            return None
        value = _decode(raw)
        if any(s.explode for s in specs if s.name == name):
            lists.setdefault(name, []).append(value)
        else:
            if name in singles:
                return None
            if spec.prefix is not None and len(value) > spec.prefix:
                return None
            singles[name] = value
    out: list[tuple[_VarSpec, str | list[str]]] = []
    for name, sval in singles.items():
        out.append((by_name[name], sval))
    for name, lval in lists.items():
        spec = next(s for s in specs if s.name == name and s.explode)
        out.append((spec, lval))
    return out


def _merge(result: MatchResult, prefixed: set[str], spec: _VarSpec, value: str | list[str]) -> bool:
    """Record ``value`` for ``spec``; False if inconsistent with an earlier occurrence."""
    name = spec.name
    is_prefix = spec.prefix is not None
    if name not in result:
        result[name] = value
        if is_prefix:
            prefixed.add(name)
        return True
    old = result[name]
    if old == value:
        if not is_prefix:
            prefixed.discard(name)
        return True
    if isinstance(old, str) and isinstance(value, str):
        if name in prefixed and value.startswith(old):
            result[name] = value
            if not is_prefix:
                prefixed.discard(name)
            return True
        if is_prefix and old.startswith(value) and spec.prefix is not None and old[: spec.prefix] == value:
            return True
    return False


def _encode_literal(text: str) -> str:
    return _encode(text, True)


def _expand_expression(expr: _Expression, values: Mapping[str, VariableValue]) -> str:
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
            encoded = _encode(scalar, op.allow_reserved)
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
            return _encode(s, op.allow_reserved)

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
