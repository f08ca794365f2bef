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

from mcpbind.server.uri_template.expand import ScalarValue, VariableValue
from mcpbind.server.uri_template.match import MatchResult
from mcpbind.server.uri_template.template import UriTemplate

__all__ = ["MatchResult", "ScalarValue", "UriTemplate", "VariableValue"]
