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
``match(uri)`` returns the variables (percent-decoded) or ``None``, in time
linear in the length of the URI: it reads the URI once, from left to right,
and never goes back.  Every value is the longest run of the characters its
operator allows, and every choice (is an optional part there, does a list go
on) is made by the next character.  A template in which such a choice could
go either way cannot be matched that way, so it is refused:
:meth:`UriTemplate.check_matchable` (and ``match``) raise ``ValueError``
naming the template and the reason; ``expand`` still works.  Refused are:

* a value followed by something that may begin with a character the value
  may contain: adjacent variables (``{a}{b}``, ``{name}{.ext}``,
  ``{+path}{x}``), and a literal that may occur inside the value before it
  (``{a}-{b}``, ``{+path}/{rest}``);
* an optional expression followed by something that may begin with its own
  first character (``{/a}/x/{b}``, ``{?q}&x``, ``{x,y},z{w}``);
* an exploded variable that is not the last of its ``{...}``, ``{+...}``,
  ``{#...}``, ``{....}`` or ``{/...}`` expression (``{/list*,path}``).

The literal text at the very end of a template is matched against the end of
the URI, so the value before it may contain that text: ``{+path}/here`` and
``docs://{name}.md`` are fine.  The policy:

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
  - ``{+var}`` and ``{#var}``: anything, except ``?`` when a query (a ``{?...}``
    expression or literal ``?``) comes later in the template and ``#`` when a
    fragment (``{#...}`` or literal ``#``) does: as in RFC 3986, the first
    ``?`` begins the query and the first ``#`` the fragment, so
    ``file:///{+path}{?q}`` against ``file:///a/b?q=1`` gives ``path="a/b"``;
  - ``{.var}``: anything but ``. / ? #``;
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
* A prefix variable ``{var:N}`` matches at most N characters (counted after
  percent-decoding, UTF-8 aware): a longer value makes the match fail (it is
  not handed to the next variable).  A variable used more than once must be
  consistent; a prefixed occurrence must be a prefix of the full one
  (``{/var:1,var}`` against ``/v/value`` gives ``var="value"``).
* Values are percent-decoded as UTF-8; invalid UTF-8 makes the match fail.
  For ``+``/``#`` expansion passes existing ``%XX`` triplets through, so a
  value containing ``%`` does not round-trip through ``{+var}``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
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
    text: str  # as written in the template, braces included (for messages)


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

    __slots__ = ("_ambiguity", "_parts", "_steps", "_suffix", "_template")

    def __init__(self, template: str) -> None:
        self._template = template
        self._parts: tuple[str | _Expression, ...] = tuple(self._parse(template))
        self._steps, self._suffix, self._ambiguity = _compile_matcher(self._parts)

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
        return _Expression(_OPERATORS[op_char], tuple(specs), "{" + body + "}")

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

    def check_matchable(self) -> None:
        """Raise ``ValueError`` (naming the template and the reason) if :meth:`match` cannot
        tell the variables apart in every URI, e.g. for adjacent variables (``{a}{b}``).

        Such a template can still be expanded; the module docstring lists what is refused.
        """
        if self._ambiguity is not None:
            raise ValueError(
                f"URI template {self._template!r} cannot be matched unambiguously: {self._ambiguity}"
            )

    def match(self, uri: str) -> MatchResult | None:
        """Return the variables if ``uri`` matches the template, else ``None``.

        Takes time linear in ``len(uri)``. Raises ``ValueError`` for a template that
        :meth:`check_matchable` refuses. See the module docstring for the exact policy.
        """
        self.check_matchable()
        end = len(uri)
        if self._suffix:
            if not uri.endswith(self._suffix):
                return None
            end -= len(self._suffix)
        result: MatchResult = {}
        prefixed: set[str] = set()
        pos = 0
        try:
            for step in self._steps:
                pos = step.scan(uri, pos, end, result, prefixed)
                if pos < 0:
                    return None
        except UnicodeDecodeError:
            return None
        return result if pos == end else None


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


# -- matching machinery ------------------------------------------------------------------
#
# A template compiles to a list of steps, each of which consumes text from the URI at the
# current position and never gives any back: a literal, or one expression. Inside a step a
# value is a maximal run of the characters its operator allows (one C-level scan), and every
# choice (is an optional part there, does a list go on, where does a value end) is made by
# looking at the next character. ``_compile_matcher`` refuses a template in which one of those
# choices could go either way (the characters a value may contain, or an optional part may
# begin with, can also begin what follows it): the steps then find the only possible match,
# in one pass over the URI.


@dataclass(frozen=True, slots=True)
class _Chars:
    """A set of characters: ``chars``, or every character but ``chars`` when ``negated``."""

    chars: frozenset[str]
    negated: bool = False

    def common(self, other: _Chars) -> str | None:
        """A character in both sets (the first in a readable order), or ``None``."""
        if not self.negated and not other.negated:
            both = self.chars & other.chars
        elif self.negated and other.negated:
            # Every character but finitely many: there is always one in common.
            for c in itertools.chain(_READABLE, map(chr, range(0x110000))):
                if c not in self.chars and c not in other.chars:
                    return c
            return None  # pragma: no cover
        else:
            positive, negative = (other, self) if self.negated else (self, other)
            both = positive.chars - negative.chars
        if not both:
            return None
        return min(both, key=lambda c: (_READABLE.find(c) % (len(_READABLE) + 1), c))

    def union(self, other: _Chars) -> _Chars:
        if not self.negated and not other.negated:
            return _Chars(self.chars | other.chars)
        if self.negated and other.negated:
            return _Chars(self.chars & other.chars, True)
        positive, negative = (other, self) if self.negated else (self, other)
        return _Chars(negative.chars - positive.chars, True)


_READABLE = "0123456789xyzabc-._~%!$&'()*+,;=:@/?#[] "


def _but(chars: str) -> _Chars:
    return _Chars(frozenset(chars), True)


class _Run:
    """The longest run of characters outside ``excluded`` from a position: one regex scan
    of a single character class, which cannot backtrack."""

    __slots__ = ("chars", "pattern")

    def __init__(self, excluded: str) -> None:
        self.chars = _but(excluded)
        body = "".join(sorted(set(excluded)))
        self.pattern = re.compile(f"[^{re.escape(body)}]*" if body else ".*", re.DOTALL)

    def end(self, uri: str, pos: int, end: int) -> int:
        found = self.pattern.match(uri, pos, end)
        assert found is not None  # a starred class always matches
        return found.end()


_Result = MatchResult


def _record(result: _Result, prefixed: set[str], spec: _VarSpec, text: str) -> bool:
    value = _decode(text)
    if spec.prefix is not None and len(value) > spec.prefix:
        return False
    return _merge(result, prefixed, spec, value)


class _Step:
    """One part of a compiled template; ``scan`` returns the position after it, or -1."""

    __slots__ = ()
    nullable = True

    def first(self) -> _Chars:
        """The characters the step's text can begin with."""
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def problem(self, follow: list[tuple[_Chars, str]]) -> str | None:
        """Why this step cannot decide where it ends when ``follow`` comes after it."""
        return None

    def scan(self, uri: str, pos: int, end: int, result: _Result, prefixed: set[str]) -> int:
        raise NotImplementedError


class _LiteralStep(_Step):
    __slots__ = ("text",)
    nullable = False

    def __init__(self, text: str) -> None:
        self.text = text

    def first(self) -> _Chars:
        return _Chars(frozenset(self.text[0]))

    def describe(self) -> str:
        return f"the text {self.text!r}"

    def scan(self, uri: str, pos: int, end: int, result: _Result, prefixed: set[str]) -> int:
        return pos + len(self.text) if uri.startswith(self.text, pos, end) else -1


class _ExpressionStep(_Step):
    __slots__ = ("expr",)

    def __init__(self, expr: _Expression) -> None:
        self.expr = expr

    def describe(self) -> str:
        return self.expr.text

    def _value_problem(self, run: _Run, follow: list[tuple[_Chars, str]], name: str = "") -> str | None:
        for chars, what in follow:
            c = run.chars.common(chars)
            if c is not None:
                whose = f"the value of {name!r} in" if name else "a value of"
                return (
                    f"where {whose} {self.expr.text} ends is unclear: it may contain {c!r},"
                    f" which may also begin {what} after it"
                )
        return None

    def _lead_problem(
        self, lead: _Chars, follow: list[tuple[_Chars, str]], how: str = "begins with"
    ) -> str | None:
        for chars, what in follow:
            c = lead.common(chars)
            if c is not None:
                return (
                    f"whether {self.expr.text} goes on is unclear: it {how} {c!r}, as {what} after it may"
                    if how != "begins with"
                    else f"whether {self.expr.text} is there is unclear: it is optional and {how} {c!r},"
                    f" as {what} after it may"
                )
        return None

    def _exploded_not_last(self) -> str | None:
        for spec in self.expr.varspecs[:-1]:
            if spec.explode:
                return (
                    f"the exploded variable {spec.name + '*'!r} must be the last of {self.expr.text},"
                    " since its items are separated like the variables"
                )
        return None


class _SimpleStep(_ExpressionStep):
    """``{a,b}``, ``{+a,b}``, ``{#a,b}``: values separated by ``,``, assigned from the left."""

    __slots__ = ("lead", "runs")

    def __init__(self, expr: _Expression, query_after: bool, fragment_after: bool) -> None:
        super().__init__(expr)
        self.lead = expr.op.first  # "" or "#"
        multi = len(expr.varspecs) > 1
        excluded = "" if expr.op.allow_reserved else "/?#"
        if expr.op.allow_reserved:
            # Reserved characters pass, but not the one starting a later query or fragment.
            excluded += ("?" if query_after else "") + ("#" if fragment_after else "")
        self.runs = tuple(_Run(excluded + ("," if multi and not s.explode else "")) for s in expr.varspecs)

    def first(self) -> _Chars:
        if self.lead:
            return _Chars(frozenset(self.lead))
        first = self.runs[0].chars
        return first.union(_Chars(frozenset(","))) if len(self.runs) > 1 else first

    def problem(self, follow: list[tuple[_Chars, str]]) -> str | None:
        problem = self._exploded_not_last()
        if problem is None and self.lead:
            problem = self._lead_problem(_Chars(frozenset(self.lead)), follow)
        if problem is None and len(self.runs) > 1:
            problem = self._lead_problem(_Chars(frozenset(",")), follow, "separates its values with")
        for spec, run in zip(self.expr.varspecs, self.runs, strict=True):
            if problem is None:
                problem = self._value_problem(run, follow, spec.name)
        return problem

    def scan(self, uri: str, pos: int, end: int, result: _Result, prefixed: set[str]) -> int:
        if self.lead:
            if pos >= end or uri[pos] != self.lead:
                return pos
            pos += 1
        for i, spec in enumerate(self.expr.varspecs):
            if i:
                if pos >= end or uri[pos] != ",":
                    break
                pos += 1
            stop = self.runs[i].end(uri, pos, end)
            text = uri[pos:stop]
            pos = stop
            if spec.explode:
                if text and not _merge(result, prefixed, spec, [_decode(t) for t in text.split(",")]):
                    return -1
            elif not _record(result, prefixed, spec, text):
                return -1
        return pos


class _LabelStep(_ExpressionStep):
    """``{.a,b}`` and ``{/a,b}``: each value (or list item) after its own ``.`` or ``/``."""

    __slots__ = ("items", "lead", "run")

    def __init__(self, expr: _Expression) -> None:
        super().__init__(expr)
        self.lead = expr.op.first
        self.run = _Run(self.lead + "/?#")
        self.items = _Run("".join(c for c in "/?#" if c != self.lead))  # a whole exploded list

    def first(self) -> _Chars:
        return _Chars(frozenset(self.lead))

    def problem(self, follow: list[tuple[_Chars, str]]) -> str | None:
        return (
            self._exploded_not_last()
            or self._lead_problem(self.first(), follow)
            or self._value_problem(self.run, follow)
        )

    def scan(self, uri: str, pos: int, end: int, result: _Result, prefixed: set[str]) -> int:
        lead = self.lead
        for spec in self.expr.varspecs:
            if spec.explode:  # the last one
                if pos < end and uri[pos] == lead:
                    stop = self.items.end(uri, pos, end)
                    items = [_decode(item) for item in uri[pos + 1 : stop].split(lead)]
                    pos = stop
                    if not _merge(result, prefixed, spec, items):
                        return -1
                break
            if pos >= end or uri[pos] != lead:
                break
            stop = self.run.end(uri, pos + 1, end)
            if not _record(result, prefixed, spec, uri[pos + 1 : stop]):
                return -1
            pos = stop
        return pos


class _ParamStep(_ExpressionStep):
    """``{;a,b}``: ``;name`` or ``;name=value`` items, told apart by their names."""

    __slots__ = ("run",)

    def __init__(self, expr: _Expression) -> None:
        super().__init__(expr)
        self.run = _Run(";/?#")

    def first(self) -> _Chars:
        return _Chars(frozenset(";"))

    def problem(self, follow: list[tuple[_Chars, str]]) -> str | None:
        return self._lead_problem(self.first(), follow) or self._value_problem(self.run, follow)

    def scan(self, uri: str, pos: int, end: int, result: _Result, prefixed: set[str]) -> int:
        specs = self.expr.varspecs
        i = 0
        lists: dict[int, list[str]] = {}
        while pos < end and uri[pos] == ";":
            stop = self.run.end(uri, pos + 1, end)
            name, _, value = uri[pos + 1 : stop].partition("=")
            pos = stop
            while i < len(specs) and specs[i].name != name:
                i += 1
            if i == len(specs):
                return -1
            if specs[i].explode:
                lists.setdefault(i, []).append(_decode(value))
            else:
                if not _record(result, prefixed, specs[i], value):
                    return -1
                i += 1
        for index, items in lists.items():
            if not _merge(result, prefixed, specs[index], items):
                return -1
        return pos


class _QueryStep(_ExpressionStep):
    """``{?a,b}`` and ``{&a,b}`` (with the ``{&...}`` right after them): one query."""

    __slots__ = ("leads", "run", "specs")

    def __init__(self, expr: _Expression, specs: tuple[_VarSpec, ...], leads: str, text: str) -> None:
        super().__init__(_Expression(expr.op, specs, text))
        self.leads = leads
        self.specs = specs
        self.run = _Run("#")

    def first(self) -> _Chars:
        return _Chars(frozenset(self.leads))

    def problem(self, follow: list[tuple[_Chars, str]]) -> str | None:
        return self._lead_problem(self.first(), follow) or self._value_problem(self.run, follow)

    def scan(self, uri: str, pos: int, end: int, result: _Result, prefixed: set[str]) -> int:
        if pos >= end or uri[pos] not in self.leads:
            return pos
        stop = self.run.end(uri, pos + 1, end)
        got = _parse_query(uri[pos:stop], self.specs)
        if got is None:
            return -1
        for spec, value in got:
            if not _merge(result, prefixed, spec, value):
                return -1
        return stop


def _compile_matcher(
    parts: tuple[str | _Expression, ...],
) -> tuple[tuple[_Step, ...], str, str | None]:
    """The steps matching ``parts``, the literal suffix matched at the end of the URI (so that
    the variable before it may contain that text too), and why the template is refused for
    matching (``None`` if it is not)."""
    suffix = ""
    if parts and isinstance(parts[-1], str) and len(parts) > 1:
        suffix = _encode_literal(parts[-1])
        parts = parts[:-1]
    steps: list[_Step] = []
    i = 0
    while i < len(parts):
        part = parts[i]
        later = parts[i + 1 :] + ((suffix,) if suffix else ())
        if isinstance(part, str):
            steps.append(_LiteralStep(_encode_literal(part)))
        elif part.op.char in ("?", "&"):
            # This and the '&' expressions right after it are one query.
            j = i + 1
            while j < len(parts):
                nxt = parts[j]
                if not (isinstance(nxt, _Expression) and nxt.op.char == "&"):
                    break
                j += 1
            group = [p for p in parts[i:j] if isinstance(p, _Expression)]
            specs = tuple(s for p in group for s in p.varspecs)
            leads = "?&" if part.op.char == "?" and j > i + 1 else part.op.char
            steps.append(_QueryStep(part, specs, leads, "".join(p.text for p in group)))
            i = j
            continue
        elif part.op.char in ("", "+", "#"):
            query_after = any(("?" in p) if isinstance(p, str) else p.op.char == "?" for p in later)
            fragment_after = any(("#" in p) if isinstance(p, str) else p.op.char == "#" for p in later)
            steps.append(_SimpleStep(part, query_after, fragment_after))
        elif part.op.char in (".", "/"):
            steps.append(_LabelStep(part))
        else:
            steps.append(_ParamStep(part))
        i += 1
    # What may follow each step: the first characters of the steps after it, up to the first
    # one that cannot be empty (a literal); the end of the URI adds nothing.
    follow: list[tuple[_Chars, str]] = []
    ambiguity: str | None = None
    for step in reversed(steps):
        ambiguity = step.problem(follow) or ambiguity  # the leftmost problem is reported
        here = (step.first(), step.describe())
        follow = [here, *follow] if step.nullable else [here]
    return tuple(steps), suffix, ambiguity


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
