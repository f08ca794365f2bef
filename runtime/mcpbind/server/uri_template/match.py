"""The linear-time matcher of URI templates: a template compiles to steps that read the URI once.

The policy (what matches, what is refused) is described in :mod:`mcpbind.server.uri_template`.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import TypeAlias

from mcpbind.server.uri_template.encoding import decode, encode_literal
from mcpbind.server.uri_template.syntax import Expression, VarSpec

__all__ = ["MatchResult", "compile_matcher"]

MatchResult: TypeAlias = "dict[str, str | list[str]]"


def _parse_query(text: str, specs: tuple[VarSpec, ...]) -> list[tuple[VarSpec, str | list[str]]] | None:
    by_name = {s.name: s for s in specs}
    singles: dict[str, str] = {}
    lists: dict[str, list[str]] = {}
    for pair in text[1:].split("&"):
        name, _, raw = pair.partition("=")
        spec = by_name.get(name)
        if spec is None:
            return None
        value = decode(raw)
        if any(s.explode for s in specs if s.name == name):
            lists.setdefault(name, []).append(value)
        else:
            if name in singles:
                return None
            if spec.prefix is not None and len(value) > spec.prefix:
                return None
            singles[name] = value
    out: list[tuple[VarSpec, str | list[str]]] = []
    for name, sval in singles.items():
        out.append((by_name[name], sval))
    for name, lval in lists.items():
        spec = next(s for s in specs if s.name == name and s.explode)
        out.append((spec, lval))
    return out


def _merge(result: MatchResult, prefixed: set[str], spec: VarSpec, value: str | list[str]) -> bool:
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
        if spec.prefix is not None and old[: spec.prefix] == value:  # (a prefixed occurrence)
            return True
    return False


# -- matching machinery ------------------------------------------------------------------
#
# A template compiles to a list of steps, each of which consumes text from the URI at the
# current position and never gives any back: a literal, or one expression. Inside a step a
# value is a maximal run of the characters its operator allows (one C-level scan), and every
# choice (is an optional part there, does a list go on, where does a value end) is made by
# looking at the next character. ``compile_matcher`` refuses a template in which one of those
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


def _record(result: _Result, prefixed: set[str], spec: VarSpec, text: str) -> bool:
    value = decode(text)
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

    def __init__(self, expr: Expression) -> None:
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

    def __init__(self, expr: Expression, query_after: bool, fragment_after: bool) -> None:
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
                if text and not _merge(result, prefixed, spec, [decode(t) for t in text.split(",")]):
                    return -1
            elif not _record(result, prefixed, spec, text):
                return -1
        return pos


class _LabelStep(_ExpressionStep):
    """``{.a,b}`` and ``{/a,b}``: each value (or list item) after its own ``.`` or ``/``."""

    __slots__ = ("items", "lead", "run")

    def __init__(self, expr: Expression) -> None:
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
                    items = [decode(item) for item in uri[pos + 1 : stop].split(lead)]
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

    def __init__(self, expr: Expression) -> None:
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
                lists.setdefault(i, []).append(decode(value))
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

    def __init__(self, expr: Expression, specs: tuple[VarSpec, ...], leads: str, text: str) -> None:
        super().__init__(Expression(expr.op, specs, text))
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


def compile_matcher(
    parts: tuple[str | Expression, ...],
) -> tuple[tuple[_Step, ...], str, str | None]:
    """The steps matching ``parts``, the literal suffix matched at the end of the URI (so that
    the variable before it may contain that text too), and why the template is refused for
    matching (``None`` if it is not)."""
    suffix = ""
    if parts and isinstance(parts[-1], str) and len(parts) > 1:
        suffix = encode_literal(parts[-1])
        parts = parts[:-1]
    steps: list[_Step] = []
    i = 0
    while i < len(parts):
        part = parts[i]
        later = parts[i + 1 :] + ((suffix,) if suffix else ())
        if isinstance(part, str):
            steps.append(_LiteralStep(encode_literal(part)))
        elif part.op.char in ("?", "&"):
            # This and the '&' expressions right after it are one query.
            j = i + 1
            while j < len(parts):
                nxt = parts[j]
                if not (isinstance(nxt, Expression) and nxt.op.char == "&"):
                    break
                j += 1
            group = [p for p in parts[i:j] if isinstance(p, Expression)]
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
