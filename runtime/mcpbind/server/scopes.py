"""The OAuth scopes each tool, resource, resource template and prompt needs (``scopes=`` on the
server's decorators), and those the methods of low-level handlers need: what a protected
server's authorization middleware (:mod:`mcpbind.server.auth`) checks a request's token
against before its handler runs."""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping
from typing import Final, Literal

__all__ = ["NO_SCOPES", "RequiredScopes", "normalize_scopes"]

Kind = Literal["tool", "resource", "template", "prompt"]
NO_SCOPES: Final[frozenset[str]] = frozenset()

# The method naming each kind, and where its name (or URI) is in the params.
_METHOD_OF: Final[dict[str, Kind]] = {
    "tools/call": "tool",
    "prompts/get": "prompt",
    "resources/read": "resource",
    "resources/subscribe": "resource",
    "resources/unsubscribe": "resource",
}


def normalize_scopes(scopes: Iterable[str] | str | None) -> frozenset[str]:
    """A set of scope tokens: a space-separated string or an iterable of them; ``ValueError``
    for an empty token or one with characters RFC 6749 section 3.3 does not allow."""
    if scopes is None:
        return NO_SCOPES
    items = scopes.split() if isinstance(scopes, str) else list(scopes)
    for scope in items:
        if (
            not isinstance(scope, str)
            or not scope
            or any(c in ' "\\' or not 0x21 <= ord(c) <= 0x7E for c in scope)
        ):
            raise ValueError(
                f"invalid scope {scope!r}: a scope is printable ASCII without spaces, quotes or backslashes"
            )
    return frozenset(items)


class RequiredScopes:
    """Scopes needed per tool (by name), resource (by URI), resource template (by its template
    text) and prompt (by name), and per method (``methods``: for handlers registered with
    ``on()``, ``"tools/call"`` say). A request needs the union of what applies to it."""

    __slots__ = ("_by_kind", "methods")

    def __init__(self) -> None:
        self._by_kind: dict[Kind, dict[str, frozenset[str]]] = {
            "tool": {},
            "resource": {},
            "template": {},
            "prompt": {},
        }
        self.methods: dict[str, frozenset[str]] = {}

    def __bool__(self) -> bool:
        return bool(self.methods) or any(self._by_kind.values())

    def set(self, kind: Kind, name: str, scopes: Iterable[str] | str | None) -> None:
        """Require ``scopes`` for the ``kind`` named ``name`` (none: require nothing more)."""
        needed = normalize_scopes(scopes)
        if needed:
            self._by_kind[kind][name] = needed
        else:
            self._by_kind[kind].pop(name, None)

    def set_method(self, method: str, scopes: Iterable[str] | str | None) -> None:
        """Require ``scopes`` for every request of ``method``."""
        needed = normalize_scopes(scopes)
        if needed:
            self.methods[method] = needed
        else:
            self.methods.pop(method, None)

    def every(self) -> frozenset[str]:
        """Every scope something requires (for the ``scopes_supported`` of the metadata)."""
        found: set[str] = set().union(*self.methods.values())
        for by_name in self._by_kind.values():
            found.update(*by_name.values())
        return frozenset(found)

    def of(self, kind: Kind, name: str) -> frozenset[str]:
        return self._by_kind[kind].get(name, NO_SCOPES)

    def needed(
        self,
        method: str,
        name: object,
        uri: object,
        resources: Container[str],
        templates: Callable[[], Iterable[tuple[str, Callable[[str], Mapping[str, object] | None]]]],
    ) -> frozenset[str]:
        """What a request of ``method`` whose params name ``name`` (a tool or prompt) or ``uri``
        needs. ``resources``: the URIs of the resources (a resource at ``uri`` is read rather
        than a template); ``templates()``: the resource templates in matching order, each as its
        text and its match function (asked only where a template has scopes)."""
        needed = self.methods.get(method, NO_SCOPES)
        kind = _METHOD_OF.get(method)
        if kind is None:
            return needed
        if kind == "resource":
            if not isinstance(uri, str):
                return needed
            if uri in resources:
                return needed | self._by_kind["resource"].get(uri, NO_SCOPES)
            by_template = self._by_kind["template"]
            if by_template:
                for text, match in templates():
                    if match(uri) is not None:
                        return needed | by_template.get(text, NO_SCOPES)
            return needed
        if not isinstance(name, str):
            return needed
        return needed | self._by_kind[kind].get(name, NO_SCOPES)
