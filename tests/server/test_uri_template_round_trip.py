"""Property tests for mcpbind.server.uri_template: matching an expansion gives back its defined variables."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpbind.server.uri_template import UriTemplate

_RESERVED = ":/?#[]@!$&'()*+,;="
_SAFE = "abcXYZ019-._~ " + _RESERVED + "é€😀\u00a0"
text = st.text(alphabet=_SAFE, max_size=12)
maybe_text = st.none() | text
lists = st.lists(text, max_size=4)
labels = st.lists(st.text(alphabet=_SAFE.replace(".", ""), max_size=8), max_size=4)


def _defined(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None and v != []}


ROUND_TRIP: list[tuple[str, st.SearchStrategy[dict[str, Any]]]] = [
    ("file:///{+path}", st.fixed_dictionaries({"path": text})),
    ("users/{id}", st.fixed_dictionaries({"id": text})),
    (
        "users/{id}/posts{?page,sort}",
        st.fixed_dictionaries({"id": text, "page": maybe_text, "sort": maybe_text}),
    ),
    ("{/segments*}", st.fixed_dictionaries({"segments": lists})),
    ("repo://{owner}/{name}{/path*}", st.fixed_dictionaries({"owner": text, "name": text, "path": lists})),
    ("{x,y}", st.fixed_dictionaries({"x": text, "y": maybe_text})),
    ("{;a,b}", st.fixed_dictionaries({"a": maybe_text, "b": maybe_text})),
    ("{?tags*,q}", st.fixed_dictionaries({"tags": lists, "q": maybe_text})),
    (
        "search{?q}{&page,lang}",
        st.fixed_dictionaries({"q": maybe_text, "page": maybe_text, "lang": maybe_text}),
    ),
    (
        "doc:{+path}{#frag}",
        # A '#' in path would begin the fragment, so leave it out.
        st.fixed_dictionaries(
            {"path": st.text(alphabet=_SAFE.replace("#", ""), max_size=12), "frag": maybe_text}
        ),
    ),
    ("host{.labels*}/", st.fixed_dictionaries({"labels": labels})),
    ("{/a,b}{?c}", st.fixed_dictionaries({"a": text, "b": maybe_text, "c": maybe_text})),
]


@pytest.mark.parametrize(("template", "strategy"), ROUND_TRIP, ids=[t for t, _ in ROUND_TRIP])
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_round_trip(template: str, strategy: st.SearchStrategy[dict[str, Any]], data: st.DataObject) -> None:
    values = data.draw(strategy)
    t = UriTemplate(template)
    uri = t.expand(values)
    assert t.match(uri) == _defined(values), uri


@settings(max_examples=200, deadline=None)
@given(value=text, n=st.integers(1, 5))
def test_round_trip_prefix(value: str, n: int) -> None:
    t = UriTemplate(f"p/{{x:{n}}}")
    assert t.match(t.expand(x=value)) == {"x": value[:n]}
