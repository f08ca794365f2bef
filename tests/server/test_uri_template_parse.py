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


# The whole message users see: what is wrong, where, in which template.
INVALID_MESSAGES = [
    ("{}", "empty expression at position 0 in URI template '{}'"),
    ("{{a}", "unclosed '{' at position 0 in URI template '{{a}'"),
    # The first '{' inside an expression counts, not a later one.
    ("{a{b}{c}", "unclosed '{' at position 0 in URI template '{a{b}{c}'"),
    ("{=var}", "reserved operator '=' at position 1 in URI template '{=var}'"),
    ("{x,}", "bad variable name '' at position 3 in URI template '{x,}': empty"),
    ("{a,.b}", "bad variable name '.b' at position 3 in URI template '{a,.b}': misplaced '.'"),
    ("{a..b}", "bad variable name 'a..b' at position 3 in URI template '{a..b}': misplaced '.'"),
    ("{a.}", "bad variable name 'a.' at position 2 in URI template '{a.}': ends with '.'"),
    ("{va-r}", "bad variable name 'va-r' at position 3 in URI template '{va-r}': character '-' not allowed"),
    # A '%' must be followed by two hex digits (the first, then the second, each checked).
    (
        "{%G1}",
        "bad variable name '%G1' at position 1 in URI template '{%G1}': '%' not followed by two hex digits",
    ),
    (
        "{%G1a}",
        "bad variable name '%G1a' at position 1 in URI template '{%G1a}': '%' not followed by two hex digits",
    ),
    (
        "{a%4G}",
        "bad variable name 'a%4G' at position 2 in URI template '{a%4G}': '%' not followed by two hex digits",
    ),
    # The character right after a triplet is checked too.
    ("{%41-}", "bad variable name '%41-' at position 4 in URI template '{%41-}': character '-' not allowed"),
    (
        "{var:10000}",
        "bad prefix modifier ':10000' at position 4 in URI template '{var:10000}' (expected ':' and 1-9999)",
    ),
    # The modifier is everything after the first ':'.
    (
        "{var:1:2}",
        "bad prefix modifier ':1:2' at position 4 in URI template '{var:1:2}' (expected ':' and 1-9999)",
    ),
]


@pytest.mark.parametrize(("template", "message"), INVALID_MESSAGES)
def test_invalid_template_messages(template: str, message: str) -> None:
    with pytest.raises(ValueError) as refused:
        UriTemplate(template)
    assert str(refused.value) == message


def test_longest_prefix_modifier_and_late_triplets_are_valid() -> None:
    assert UriTemplate("{var:9999}").expand(var="value") == "value"
    assert UriTemplate("{var:1000}").match("a" * 1000) == {"var": "a" * 1000}
    # A triplet after the third character of a name, and two in a row.
    assert UriTemplate("{abcd%41,x%41%42}").variable_names == ("abcd%41", "x%41%42")


def test_equality_and_hash() -> None:
    assert UriTemplate("{x}") != UriTemplate("{y}")
    assert UriTemplate("{x}") != "{x}"  # only a template equals a template
    assert hash(UriTemplate("{x}")) == hash(UriTemplate("{x}"))


def test_valid_varnames() -> None:
    t = UriTemplate("{a.b,%41_1,X9}")
    assert t.variable_names == ("a.b", "%41_1", "X9")
    assert UriTemplate("{a%41}").variable_names == ("a%41",)  # a triplet that ends the name
    assert t.expand({"a.b": "1", "%41_1": "2"}) == "1,2"
    assert str(t) == "{a.b,%41_1,X9}"
    assert UriTemplate("{x}") == UriTemplate("{x}")
    assert len({UriTemplate("{x}"), UriTemplate("{x}")}) == 1
