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


@pytest.mark.parametrize(("template", "reason"), AMBIGUOUS)
def test_ambiguous_templates_are_refused_for_matching(template: str, reason: str) -> None:
    t = UriTemplate(template)  # expanding it is fine
    assert t.expand(a="1", b="2") is not None
    with pytest.raises(ValueError, match="cannot be matched unambiguously") as refused:
        t.check_matchable()
    assert repr(template) in str(refused.value) and reason in str(refused.value)
    with pytest.raises(ValueError, match="cannot be matched unambiguously"):
        t.match("anything")
