"""Tests for mcpbind.server.uri_template: templates that cannot be matched unambiguously, and why."""

from __future__ import annotations

import pytest

from mcpbind.server.uri_template import UriTemplate

# Templates where a value's end, or whether an optional part is there, could not be told from
# the next character: matching them would need backtracking, so they are refused.
AMBIGUOUS = [
    ("{a}{b}", "where the value of 'a' in {a} ends is unclear"),
    ("x://{a}{b}{c}{d}/end", "{b} after it"),
    ("x://{+a}{+b}{+c}/end", "where the value of 'a' in {+a} ends is unclear"),
    ("up{+path}{var}/here", "{var} after it"),
    ("{name}{.ext}", "it may contain '.', which may also begin {.ext}"),
    ("{var:3}{rest}", "{rest} after it"),
    ("{a}-{b}", "it may contain '-', which may also begin the text '-'"),
    ("{+path}/{rest}", "it may contain '/'"),
    ("{+a}x{+b}", "it may contain 'x'"),
    ("{/a}/x/{b}", "whether {/a} is there is unclear"),
    ("{x,y},{z}", "whether {x,y} goes on is unclear"),
    ("{/list*,path:4}", "the exploded variable 'list*' must be the last of {/list*,path:4}"),
    ("{list*,x}", "the exploded variable 'list*' must be the last"),
    ("{?q}/{x}", "a value of {?q} ends is unclear"),
    ("{;a}{;b}", "whether {;a} is there is unclear"),
    ("s{?q}x{/p}", "it may contain 'x', which may also begin the text 'x'"),
]

# The reasons in full: the character named (the first in a readable order that both sides may
# have), the step it clashes with (a whole query group), and the wording of each kind of clash.
REASONS = [
    # Two values that may contain almost anything: the first character they share is '0'.
    (
        "{a}{b}",
        "where the value of 'a' in {a} ends is unclear: it may contain '0', which may also begin {b} after it",
    ),
    # An optional step's first character against a value that may begin with anything.
    (
        "{/a}{+b}",
        "whether {/a} is there is unclear: it is optional and begins with '/', as {+b} after it may",
    ),
    # {x,y} begins with a value of x or with ',' (x undefined), never with '/' '?' '#'.
    (
        "{/a}{x,y}",
        "where a value of {/a} ends is unclear: it may contain '0', which may also begin {x,y} after it",
    ),
    (
        "{a,b}{x,y}",
        "whether {a,b} goes on is unclear: it separates its values with ',', as {x,y} after it may",
    ),
    (
        "{x,y},{z}",
        "whether {x,y} goes on is unclear: it separates its values with ',', as the text ',' after it may",
    ),
    (
        "{a,b}X{c}",
        "where the value of 'a' in {a,b} ends is unclear: it may contain 'X', which may also begin the text 'X' after it",
    ),
    (
        "{#a}#{b}",
        "whether {#a} is there is unclear: it is optional and begins with '#', as the text '#' after it may",
    ),
    (
        "{#list*,x}",
        "the exploded variable 'list*' must be the last of {#list*,x}, since its items are separated like the variables",
    ),
    (
        "{;a}X{b}",
        "where a value of {;a} ends is unclear: it may contain 'X', which may also begin the text 'X' after it",
    ),
    # A query group begins with '?' or '&': '&' comes first.
    (
        "{?q}{&r}{+b}",
        "whether {?q}{&r} is there is unclear: it is optional and begins with '&', as {+b} after it may",
    ),
    (
        "{a}{?q}{&r}",
        "where the value of 'a' in {a} ends is unclear: it may contain '&', which may also begin {?q}{&r} after it",
    ),
    # What follows a value reaches past the optional steps after it, to the first literal.
    (
        "{+a}{?q}x{b}",
        "where the value of 'a' in {+a} ends is unclear: it may contain 'x', which may also begin the text 'x' after it",
    ),
]


@pytest.mark.parametrize(("template", "reason"), REASONS)
def test_refusal_reasons(template: str, reason: str) -> None:
    with pytest.raises(ValueError) as refused:
        UriTemplate(template).check_matchable()
    assert str(refused.value) == f"URI template {template!r} cannot be matched unambiguously: {reason}"


@pytest.mark.parametrize(("template", "reason"), AMBIGUOUS)
def test_ambiguous_templates_are_refused_for_matching(template: str, reason: str) -> None:
    t = UriTemplate(template)  # expanding it is fine
    assert t.expand(a="1", b="2") is not None
    with pytest.raises(ValueError, match="cannot be matched unambiguously") as refused:
        t.check_matchable()
    assert repr(template) in str(refused.value) and reason in str(refused.value)
    with pytest.raises(ValueError, match="cannot be matched unambiguously"):
        t.match("anything")
