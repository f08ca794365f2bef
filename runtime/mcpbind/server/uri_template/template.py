"""Parsing of RFC 6570 URI templates and :class:`UriTemplate`, their public API."""

from __future__ import annotations

from collections.abc import Mapping

from mcpbind.server.uri_template.encoding import HEX, encode_literal
from mcpbind.server.uri_template.expand import VariableValue, expand_expression
from mcpbind.server.uri_template.match import MatchResult, compile_matcher
from mcpbind.server.uri_template.syntax import OPERATORS, Expression, VarSpec

__all__ = ["UriTemplate"]

_VARCHAR = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_RESERVED_OPERATORS = frozenset("=,!@|")


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
        self._parts: tuple[str | Expression, ...] = tuple(self._parse(template))
        self._steps, self._suffix, self._ambiguity = compile_matcher(self._parts)

    # -- parsing ---------------------------------------------------------------

    @staticmethod
    def _parse(template: str) -> list[str | Expression]:
        parts: list[str | Expression] = []
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
    def _parse_expression(template: str, start: int, end: int) -> Expression:
        body = template[start:end]
        if not body:
            raise ValueError(f"empty expression at position {start - 1} in URI template {template!r}")
        op_char = body[0] if body[0] in OPERATORS and body[0] != "" else ""
        if body[0] in _RESERVED_OPERATORS:
            raise ValueError(
                f"reserved operator {body[0]!r} at position {start} in URI template {template!r}"
            )
        pos = start + len(op_char)
        specs: list[VarSpec] = []
        for raw in body[len(op_char) :].split(","):
            specs.append(UriTemplate._parse_varspec(template, raw, pos))
            pos += len(raw) + 1
        return Expression(OPERATORS[op_char], tuple(specs), "{" + body + "}")

    @staticmethod
    def _parse_varspec(template: str, raw: str, pos: int) -> VarSpec:
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
        return VarSpec(name, prefix, explode)

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
                if not (i + 2 < len(name) and name[i + 1] in HEX and name[i + 2] in HEX):
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
            if isinstance(part, Expression):
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
                out.append(encode_literal(part))
            else:
                out.append(expand_expression(part, values))
        return "".join(out)

    # -- matching --------------------------------------------------------------

    def check_matchable(self) -> None:
        """Raise ``ValueError`` (naming the template and the reason) if :meth:`match` cannot
        tell the variables apart in every URI, e.g. for adjacent variables (``{a}{b}``).

        Such a template can still be expanded; :mod:`mcpbind.server.uri_template` lists what is refused.
        """
        if self._ambiguity is not None:
            raise ValueError(
                f"URI template {self._template!r} cannot be matched unambiguously: {self._ambiguity}"
            )

    def match(self, uri: str) -> MatchResult | None:
        """Return the variables if ``uri`` matches the template, else ``None``.

        Takes time linear in ``len(uri)``. Raises ``ValueError`` for a template that
        :meth:`check_matchable` refuses. See :mod:`mcpbind.server.uri_template` for the exact policy.
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
