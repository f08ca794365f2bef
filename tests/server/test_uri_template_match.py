"""Tests for mcpbind.server.uri_template: matching URIs (the policy of the package docstring), in linear time."""

from __future__ import annotations

import time
from typing import Any

import pytest

from mcpbind.server.uri_template import UriTemplate

# -- matching ------------------------------------------------------------------

MATCH_CASES: list[tuple[str, str, dict[str, Any] | None]] = [
    # Level 1
    ("users/{id}", "users/42", {"id": "42"}),
    ("users/{id}", "users/a%20b%2Fc", {"id": "a b/c"}),
    ("users/{id}", "users/a b", {"id": "a b"}),
    ("users/{id}", "users/42/posts", None),  # '/' not matched by {var}
    ("users/{id}", "users/42?x=1", None),
    ("users/{id}", "users/42#f", None),
    ("users/{id}", "users/", {"id": ""}),
    ("users/{id}", "user/42", None),
    ("users/{id}/", "users/42/extra", None),  # trailing text
    ("users/{id}", "users/%C3%A9", {"id": "é"}),
    ("users/{id}", "users/%FF", None),  # invalid UTF-8
    ("weather://{city}/current", "weather://Paris/current", {"city": "Paris"}),
    ("weather://{city}/current", "weather://Paris/forecast", None),
    ("{x,y}", "1024,768", {"x": "1024", "y": "768"}),
    ("{x,y}", "1024", {"x": "1024"}),
    ("map?{x,y}", "map?1024,768", {"x": "1024", "y": "768"}),
    ("{x,hello,y}", "1024,Hello%20World%21,768", {"x": "1024", "hello": "Hello World!", "y": "768"}),
    ("{list*}", "red,green,blue", {"list": ["red", "green", "blue"]}),
    ("{list}", "red,green,blue", {"list": "red,green,blue"}),
    # Level 2
    ("file:///{+path}", "file:///a/b%20c/d.txt", {"path": "a/b c/d.txt"}),
    ("file:///{+path}", "file:///", {"path": ""}),
    ("file:///{+path}", "file:///a?b#c", {"path": "a?b#c"}),
    ("file:///{+path}{?q}", "file:///a/b?q=1", {"path": "a/b", "q": "1"}),
    ("file:///{+path}{?q}", "file:///a/b", {"path": "a/b"}),
    ("file:///{+path}{?q}", "file:///a?b", None),  # the first '?' begins the query
    ("doc:{+path}{#frag}", "doc:a?b#c#d", {"path": "a?b", "frag": "c#d"}),
    ("{+path}/here", "/a/here/here", {"path": "/a/here"}),  # the final literal ends the URI
    ("docs://{name}.md", "docs://a.md.md", {"name": "a.md"}),
    ("docs://{name}.md", "docs://.m", None),
    ("a{x}a", "a", None),
    ("{+path}/here", "/foo/bar/here", {"path": "/foo/bar"}),
    ("here?ref={+path}", "here?ref=/foo/bar", {"path": "/foo/bar"}),
    ("{+base}index", "http://example.com/home/index", {"base": "http://example.com/home/"}),
    ("X{#var}", "X#value", {"var": "value"}),
    ("X{#var}", "X", {}),
    ("X{#hello}", "X#Hello%20World!", {"hello": "Hello World!"}),
    ("page{#section}", "page#a/b?c", {"section": "a/b?c"}),
    # Level 3
    ("{+x,hello,y}", "1024,Hello%20World!,768", {"x": "1024", "hello": "Hello World!", "y": "768"}),
    ("{#path,x}/here", "#/foo/bar,1024/here", {"path": "/foo/bar", "x": "1024"}),
    ("X{.var}", "X.value", {"var": "value"}),
    ("X{.x,y}", "X.1024.768", {"x": "1024", "y": "768"}),
    ("X{.var}", "X", {}),
    ("X{.var}", "X.", {"var": ""}),
    ("{/var}", "/value", {"var": "value"}),
    ("{/var,x}/here", "/value/1024/here", {"var": "value", "x": "1024"}),
    ("{/who,dub}", "/fred/me%2Ftoo", {"who": "fred", "dub": "me/too"}),
    ("{/var,empty}", "/value/", {"var": "value", "empty": ""}),
    ("{;x,y}", ";x=1024;y=768", {"x": "1024", "y": "768"}),
    ("{;x,y,empty}", ";x=1024;y=768;empty", {"x": "1024", "y": "768", "empty": ""}),
    ("{;v,bar,who}", ";v=6;who=fred", {"v": "6", "who": "fred"}),
    ("{;x}", ";y=1", None),
    ("{;x}", ";xy=1", None),
    ("{?x,y}", "?x=1024&y=768", {"x": "1024", "y": "768"}),
    ("{?x,y}", "?y=768&x=1024", {"x": "1024", "y": "768"}),  # order-independent
    ("{?x,y}", "?y=768", {"y": "768"}),
    ("{?x,y}", "", {}),
    ("{?x,y,empty}", "?x=1024&y=768&empty=", {"x": "1024", "y": "768", "empty": ""}),
    ("{?x}", "?x", {"x": ""}),
    ("{?x}", "?x=1&x=2", None),  # repeated non-exploded parameter
    ("{?x}", "?x=1&z=2", None),  # unknown parameter
    ("{?x}", "?z=2", None),
    ("{?x}", "?x=a%26b%3Dc+d", {"x": "a&b=c+d"}),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024", {"x": "1024"}),
    ("?fixed=yes{&x}", "?fixed=yes", {}),
    ("?fixed=yes{&x}", "?fixed=no&x=1", None),
    ("{&x,y,empty}", "&x=1024&y=768&empty=", {"x": "1024", "y": "768", "empty": ""}),
    ("search{?q}{&page,lang}", "search?lang=fr&q=cat&page=2", {"q": "cat", "page": "2", "lang": "fr"}),
    ("search{?q}{&page}", "search&page=2", {"page": "2"}),
    (
        "users/{id}/posts{?page,sort}",
        "users/42/posts?sort=new&page=2",
        {"id": "42", "page": "2", "sort": "new"},
    ),
    ("users/{id}/posts{?page,sort}", "users/42/posts", {"id": "42"}),
    ("users/{id}/posts{?page,sort}", "users/42/comments", None),
    # Level 4
    ("{var:3}", "val", {"var": "val"}),
    ("{var:3}", "valu", None),
    ("{var:2}", "%C3%A9%C3%A8", {"var": "éè"}),
    ("{var:2}", "%C3%A9%C3%A8%C3%A0", None),
    ("{+path:6}/here", "/foo/b/here", {"path": "/foo/b"}),
    ("{/var:1,var}", "/v/value", {"var": "value"}),
    ("{/var:1,var}", "/x/value", None),  # inconsistent repeated variable
    ("{/list*}", "/red/green/blue", {"list": ["red", "green", "blue"]}),
    ("{/list*}", "", {}),
    ("{/list*}", "/", {"list": [""]}),
    ("{/list*}.json", "/a/b.json", {"list": ["a", "b"]}),
    ("{/list*}{?q}", "/a/b%20c?q=1", {"list": ["a", "b c"], "q": "1"}),
    ("X{.list*}", "X.red.green.blue", {"list": ["red", "green", "blue"]}),
    ("www{.dom*}", "www.example.com", {"dom": ["example", "com"]}),
    ("{;list*}", ";list=red;list=green;list=blue", {"list": ["red", "green", "blue"]}),
    ("{;hello:5}", ";hello=Hello", {"hello": "Hello"}),
    ("{?list*}", "?list=red&list=green&list=blue", {"list": ["red", "green", "blue"]}),
    ("{?list}", "?list=red,green,blue", {"list": "red,green,blue"}),
    ("{?var:3}", "?var=val", {"var": "val"}),
    ("{?var:3}", "?var=valu", None),
    ("{&list*}", "&list=red&list=green", {"list": ["red", "green"]}),
    ("{keys*}", "semi=%3B,dot=.", {"keys": ["semi=;", "dot=."]}),
    # After a query: a fragment, or text that begins with '#' (a query value stops at the first
    # '#', RFC 3986 section 3.4; a '#' inside it is encoded, RFC 6570 section 3.2.8).
    ("s{?q}{#f}", "s?q=a#b", {"q": "a", "f": "b"}),
    ("s{?q}{#f}", "s#b", {"f": "b"}),
    ("s{?q}{#f}", "s?q=a%23b#c%20d", {"q": "a#b", "f": "c d"}),
    ("s{?q}{#f}", "s?q=a#b#c", {"q": "a", "f": "b#c"}),
    ("s{?q}{#f}", "s?z=1#b", None),
    ("s{?q}{&r}{#f}", "s?r=2&q=1#z", {"q": "1", "r": "2", "f": "z"}),
    ("s{?q}#end", "s?q=1#end", {"q": "1"}),
    ("s{?q}#end", "s#end", {}),
    ("s{?q}#end", "s?q=1", None),
    ("s{?q}#end", "s?q=1#end#end", None),
    ("s{?q}#x{/p}", "s?q=1#x/a", {"q": "1", "p": "a"}),
    ("s{?q}#x{/p}", "s#x/a", {"p": "a"}),
    ("s{?q}.json", "s?q=a.json.json", {"q": "a.json"}),  # the final literal ends the URI
    # Percent-encoded triplets at the end of a value, and ones cut short (kept as they are).
    ("file:///{+path}", "file:///a%2F", {"path": "a/"}),
    ("file:///{+path}", "file:///a%C3%A9", {"path": "aé"}),
    ("file:///{+path}", "file:///a%C3", None),  # invalid UTF-8
    ("file:///{+path}", "file:///a%2", {"path": "a%2"}),
    ("file:///{+path}", "file:///%", {"path": "%"}),
    # A variable used twice takes one value: every occurrence must agree, a prefixed one with
    # the start of the full value (RFC 6570 expands each occurrence from the same value).
    ("{x}/{x}", "a/a", {"x": "a"}),
    ("{x}/{x}", "a/b", None),
    ("items/{id}{?id}", "items/7?id=7", {"id": "7"}),
    ("items/{id}{?id}", "items/7?id=8", None),
    ("{/var,var:1}", "/value/v", {"var": "value"}),
    ("{/var,var:1}", "/value/x", None),
    ("{x}/{x:2}", "abc/ab", {"x": "abc"}),
    ("{x}/{x:2}", "abc/a", None),  # {x:2} of "abc" is "ab"
    ("{x:1}/{x:3}", "a/abc", {"x": "abc"}),
    ("{x:1}/{x:3}", "b/abc", None),
    ("{x:1}/{x}/{x}", "a/ab/ab", {"x": "ab"}),
    ("{x:1}/{x}/{x}", "a/ab/abc", None),  # the full value is known from the second
    ("{x:3}/{x}/{x}", "ab/ab/ab", {"x": "ab"}),
    ("{x:3}/{x}/{x}", "ab/ab/abc", None),
    # {;x:N}: at most N characters (decoded), "x" alone for the empty string.
    ("{;hello:5}", ";hello=HelloWorld", None),
    ("{;hello:5}", ";hello=H%C3%A9llo", {"hello": "Héllo"}),
    ("{;hello:5}", ";hello", {"hello": ""}),
    ("{;x:2,y}", ";x=ab;y=1", {"x": "ab", "y": "1"}),
    ("{;x:2,y}", ";x=abc;y=1", None),
    ("{;x:2,y}", ";y=1", {"y": "1"}),
    ("{;x:3,x}", ";x=abc;x=abcdef", {"x": "abcdef"}),
    ("{;x:3,x}", ";x=abd;x=abcdef", None),
    # A variable exploded in one place and not in another: a list never equals a string.
    ("{x:1}/{x*}", "a/a,b", None),
    ("{x}{/x*}", "/", None),
    ("{x}/{x*}/{+c}", "a/a/b", None),
    ("{x}/{;x*}/{+c}", "a/;x=a/b", None),
    # ... but two exploded occurrences agree on equal lists.
    ("{x*}{/x*}", "a,b/a/b", {"x": ["a", "b"]}),
    ("{x*}/{;x*}", "a/;x=a", {"x": ["a"]}),
    ("{;x*}/{x*}", ";x=a/a", {"x": ["a"]}),
    # A value that does not fit fails the whole match, even when the rest of the URI would
    # fit what follows it.
    ("{a}/{b:1}/{+c}", "x/yz/w", None),
    ("{a}/{b:1}/{+c}", "x/y/w", {"a": "x", "b": "y", "c": "w"}),
    ("{a}/{.b:1}/{+c}", "x/.yz/w", None),
    ("{a}/{;x:1}/{+c}", "q/;x=ab/w", None),
    ("{;x}", ";", None),  # no name
    ("s{?q}#x{/p}", "s?#x/a", None),  # an empty query
    ("{?q}#x{/p}", "?#x/a", None),
    # A lone ';' or '?' just before the final literal.
    ("{;x}.json", ";.json", None),
    ("{?q}.json", "?.json", None),
    ("{q}#x{?q}#x{+c}", "a#x?q=b#xyz", None),
    # {;...}: names in the template's order, each non-exploded one once.
    ("{;a,b,c}", ";b=1;b=1", None),
    ("{;x,y}", ";x=1;x=1", None),
    ("{;a}/{b}", ";a=1/2", {"a": "1", "b": "2"}),
    # Exploded query variables: each name gets its own list.
    ("{?a*,b*}", "?b=1", {"b": ["1"]}),
    ("{?a*,b*}", "?b=1&a=2&b=3", {"a": ["2"], "b": ["1", "3"]}),
    # A query group begins with '?' or '&', nothing else.
    ("search{?q}{&page}", "searchXq=1", None),
    ("a#{?q}", "a#?q=1", {"q": "1"}),  # a query after a '#' literal
    # {+var} stops at a '?' (or '#') of a literal later in the template, the final one included,
    # and only then.
    ("file:///{+path}?end", "file:///a?b?end", None),
    ("file:///{+path}?end", "file:///a/b?end", {"path": "a/b"}),
    ("doc:{+path}#end", "doc:a#b#end", None),
    ("doc:{+path}#end", "doc:a?b#end", {"path": "a?b"}),
    ("{+path}/here", "/a?b#c/here", {"path": "/a?b#c"}),
    ("file:///{+path}{?q}", "file:///aXb?q=1", {"path": "aXb", "q": "1"}),
    ("file:///{+path}", "file:///a\nb", {"path": "a\nb"}),  # leniently, any character
]


@pytest.mark.parametrize(("template", "uri", "expected"), MATCH_CASES)
def test_match(template: str, uri: str, expected: dict[str, Any] | None) -> None:
    assert UriTemplate(template).match(uri) == expected


# Valid templates against hostile URIs: the matcher reads the URI once, so each of these takes
# milliseconds (backtracking ones took minutes on 1 KB).
HOSTILE = [
    ("x://{a}/{b}/end", "x://" + "a" * 100_000 + "!"),
    ("x://{a}/{b}/end", "x://" + "a/" * 50_000 + "!"),
    ("file:///{+path}{?q}", "file:///" + "a/" * 50_000 + "?q=" + "?" * 50_000 + "#"),
    ("file:///{+path}{?q}", "file:///" + "?q=&" * 25_000),
    ("file:///{+path}{?q}", "file:///" + "?q=" * 33_000 + "#"),  # 2 minutes before
    ("{+path}/here", "/here" * 20_000 + "x"),
    ("repo://{owner}/{name}{/path*}", "repo://o/n" + "/" * 100_000 + "?"),
    ("{;x,y}", ";x" * 50_000 + "!"),
    ("{?x,y}", "?x=1&y" + "&x" * 50_000),
    ("x{.a,b}{/c*}", "x" + "." * 100_000),
    ("{x,y,z}", "," * 100_000),
    ("docs://{name}.md", "docs://" + ".md" * 33_000 + "x"),
]


@pytest.mark.parametrize(("template", "uri"), HOSTILE, ids=[t for t, _ in HOSTILE])
def test_hostile_uris_are_matched_in_linear_time(template: str, uri: str) -> None:
    t = UriTemplate(template)
    start = time.perf_counter()
    for _ in range(3):
        t.match(uri)
        t.match(uri[:10_000])
    # Generous: linear matching takes a few ms; the old backtracking matcher took minutes.
    assert time.perf_counter() - start < 5


def test_template_without_expressions() -> None:
    t = UriTemplate("config://app")
    assert t.match("config://app") == {}
    assert t.match("config://app2") is None
    assert t.match("config://ap") is None


@pytest.mark.parametrize(
    ("template", "variables"),
    [
        ("{var}", {"var": "value"}),
        ("{x,hello,y}", {"x": "1024", "hello": "Hello World!", "y": "768"}),
        ("{+path}/here", {"path": "/foo/bar"}),
        ("X{#hello}", {"hello": "Hello World!"}),
        ("{/who,dub}", {"who": "fred", "dub": "me/too"}),
        ("{;v,empty,who}", {"v": "6", "empty": "", "who": "fred"}),
        ("{?x,y,empty}", {"x": "1024", "y": "768", "empty": ""}),
        ("{/list*}", {"list": ["red", "green", "blue"]}),
        ("{;list*}", {"list": ["red", "green", "blue"]}),
        ("{?list*}", {"list": ["red", "green", "blue"]}),
        ("X{.list*}", {"list": ["red", "green", "blue"]}),
    ],
)
def test_match_inverts_rfc_expansions(template: str, variables: dict[str, Any]) -> None:
    t = UriTemplate(template)
    assert t.match(t.expand(variables)) == variables
