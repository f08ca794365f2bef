"""Tests for mcpbind.server.uri_template: parsing templates, the errors of invalid ones, identity."""

from __future__ import annotations

import pytest

from mcpbind.server.uri_template import UriTemplate


@pytest.mark.parametrize(
    ("template", "position"),
    [
        ("abc{var", 3),
        ("{var}{", 5),
        ("{a{b}", 0),
        ("abc}", 3),
        ("{}", 0),
        ("{=var}", 1),
        ("{!var}", 1),
        ("{|var}", 1),
        ("{@var}", 1),
        ("{$var}", 1),
        ("{va-r}", 3),
        ("{x,}", 3),
        ("{.}", 2),
        ("{a..b}", 3),
        ("{a.}", 2),
        ("{%zz}", 1),
        ("{var:0}", 4),
        ("{var:10000}", 4),
        ("{var:}", 4),
        ("{var:x}", 4),
        ("{var*:3}", 4),
        ("{var:3*}", 4),
        ("x{/a, b}", 5),
        ("{a%4}", 2),  # a triplet cut short at the end of the name
        ("{a%4g}", 2),
    ],
)
def test_invalid_templates(template: str, position: int) -> None:
    with pytest.raises(ValueError, match=f"position {position}\\b"):
        UriTemplate(template)


def test_valid_varnames() -> None:
    t = UriTemplate("{a.b,%41_1,X9}")
    assert t.variable_names == ("a.b", "%41_1", "X9")
    assert UriTemplate("{a%41}").variable_names == ("a%41",)  # a triplet that ends the name
    assert t.expand({"a.b": "1", "%41_1": "2"}) == "1,2"
    assert str(t) == "{a.b,%41_1,X9}"
    assert UriTemplate("{x}") == UriTemplate("{x}")
    assert len({UriTemplate("{x}"), UriTemplate("{x}")}) == 1
