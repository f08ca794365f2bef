"""Tests for mcpbind.server.uri_template: RFC 6570 expansion (levels 1-4): the RFC's examples, encoding, errors."""

from __future__ import annotations

import pytest

from mcpbind.server.uri_template import UriTemplate, VariableValue

# RFC 6570 section 3.2.1 variable values (also the ones section 1.2 uses).
RFC_VARS: dict[str, VariableValue] = {
    "count": ("one", "two", "three"),
    "dom": ("example", "com"),
    "dub": "me/too",
    "hello": "Hello World!",
    "half": "50%",
    "var": "value",
    "who": "fred",
    "base": "http://example.com/home/",
    "path": "/foo/bar",
    "list": ("red", "green", "blue"),
    "keys": {"semi": ";", "dot": ".", "comma": ","},
    "v": "6",
    "x": "1024",
    "y": "768",
    "empty": "",
    "empty_keys": {},
    "undef": None,
}

# Section 1.2, levels 1-4.
LEVEL_EXAMPLES = [
    # Level 1
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
    # Level 2
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("X{#var}", "X#value"),
    ("X{#hello}", "X#Hello%20World!"),
    # Level 3
    ("map?{x,y}", "map?1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("{+x,hello,y}", "1024,Hello%20World!,768"),
    ("{+path,x}/here", "/foo/bar,1024/here"),
    ("{#x,hello,y}", "#1024,Hello%20World!,768"),
    ("{#path,x}/here", "#/foo/bar,1024/here"),
    ("X{.var}", "X.value"),
    ("X{.x,y}", "X.1024.768"),
    ("{/var}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{;x,y}", ";x=1024;y=768"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
    # Level 4
    ("{var:3}", "val"),
    ("{var:20}", "value"),
    ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"),
    ("{keys}", "semi,%3B,dot,.,comma,%2C"),
    ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{+list}", "red,green,blue"),
    ("{+list*}", "red,green,blue"),
    ("{+keys}", "semi,;,dot,.,comma,,"),
    ("{+keys*}", "semi=;,dot=.,comma=,"),
    ("{#path:6}/here", "#/foo/b/here"),
    ("{#list}", "#red,green,blue"),
    ("{#list*}", "#red,green,blue"),
    ("{#keys}", "#semi,;,dot,.,comma,,"),
    ("{#keys*}", "#semi=;,dot=.,comma=,"),
    ("X{.var:3}", "X.val"),
    ("X{.list}", "X.red,green,blue"),
    ("X{.list*}", "X.red.green.blue"),
    ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
    ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
    ("{/var:1,var}", "/v/value"),
    ("{/list}", "/red,green,blue"),
    ("{/list*}", "/red/green/blue"),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
    ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
    ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
    ("{;hello:5}", ";hello=Hello"),
    ("{;list}", ";list=red,green,blue"),
    ("{;list*}", ";list=red;list=green;list=blue"),
    ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
    ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
    ("{?var:3}", "?var=val"),
    ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"),
    ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
    ("{&var:3}", "&var=val"),
    ("{&list}", "&list=red,green,blue"),
    ("{&list*}", "&list=red&list=green&list=blue"),
    ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
    ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
]

# Section 3.2.1 - 3.2.9.
SECTION_3_2_EXAMPLES = [
    # 3.2.1 Variable expansion
    ("{count}", "one,two,three"),
    ("{count*}", "one,two,three"),
    ("{/count}", "/one,two,three"),
    ("{/count*}", "/one/two/three"),
    ("{;count}", ";count=one,two,three"),
    ("{;count*}", ";count=one;count=two;count=three"),
    ("{?count}", "?count=one,two,three"),
    ("{?count*}", "?count=one&count=two&count=three"),
    ("{&count*}", "&count=one&count=two&count=three"),
    # 3.2.2 Simple string expansion
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
    ("{half}", "50%25"),
    ("O{empty}X", "OX"),
    ("O{undef}X", "OX"),
    ("{x,y}", "1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("?{x,empty}", "?1024,"),
    ("?{x,undef}", "?1024"),
    ("?{undef,y}", "?768"),
    ("{var:3}", "val"),
    ("{var:30}", "value"),
    ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"),
    ("{keys}", "semi,%3B,dot,.,comma,%2C"),
    ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
    # 3.2.3 Reserved expansion
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+half}", "50%25"),
    ("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"),
    ("{+base}index", "http://example.com/home/index"),
    ("O{+empty}X", "OX"),
    ("O{+undef}X", "OX"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("up{+path}{var}/here", "up/foo/barvalue/here"),
    ("{+x,hello,y}", "1024,Hello%20World!,768"),
    ("{+path,x}/here", "/foo/bar,1024/here"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{+list}", "red,green,blue"),
    ("{+list*}", "red,green,blue"),
    ("{+keys}", "semi,;,dot,.,comma,,"),
    ("{+keys*}", "semi=;,dot=.,comma=,"),
    # 3.2.4 Fragment expansion
    ("{#var}", "#value"),
    ("{#hello}", "#Hello%20World!"),
    ("{#half}", "#50%25"),
    ("foo{#empty}", "foo#"),
    ("foo{#undef}", "foo"),
    ("{#x,hello,y}", "#1024,Hello%20World!,768"),
    ("{#path,x}/here", "#/foo/bar,1024/here"),
    ("{#path:6}/here", "#/foo/b/here"),
    ("{#list}", "#red,green,blue"),
    ("{#list*}", "#red,green,blue"),
    ("{#keys}", "#semi,;,dot,.,comma,,"),
    ("{#keys*}", "#semi=;,dot=.,comma=,"),
    # 3.2.5 Label expansion with dot-prefix
    ("{.who}", ".fred"),
    ("{.who,who}", ".fred.fred"),
    ("{.half,who}", ".50%25.fred"),
    ("www{.dom*}", "www.example.com"),
    ("X{.var}", "X.value"),
    ("X{.empty}", "X."),
    ("X{.undef}", "X"),
    ("X{.var:3}", "X.val"),
    ("X{.list}", "X.red,green,blue"),
    ("X{.list*}", "X.red.green.blue"),
    ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
    ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
    ("X{.empty_keys}", "X"),
    ("X{.empty_keys*}", "X"),
    # 3.2.6 Path segment expansion
    ("{/who}", "/fred"),
    ("{/who,who}", "/fred/fred"),
    ("{/half,who}", "/50%25/fred"),
    ("{/who,dub}", "/fred/me%2Ftoo"),
    ("{/var}", "/value"),
    ("{/var,empty}", "/value/"),
    ("{/var,undef}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{/var:1,var}", "/v/value"),
    ("{/list}", "/red,green,blue"),
    ("{/list*}", "/red/green/blue"),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
    ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
    ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
    # 3.2.7 Path-style parameter expansion
    ("{;who}", ";who=fred"),
    ("{;half}", ";half=50%25"),
    ("{;empty}", ";empty"),
    ("{;v,empty,who}", ";v=6;empty;who=fred"),
    ("{;v,bar,who}", ";v=6;who=fred"),
    ("{;x,y}", ";x=1024;y=768"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{;x,y,undef}", ";x=1024;y=768"),
    ("{;hello:5}", ";hello=Hello"),
    ("{;list}", ";list=red,green,blue"),
    ("{;list*}", ";list=red;list=green;list=blue"),
    ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
    ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
    # 3.2.8 Form-style query expansion
    ("{?who}", "?who=fred"),
    ("{?half}", "?half=50%25"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("{?x,y,undef}", "?x=1024&y=768"),
    ("{?var:3}", "?var=val"),
    ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"),
    ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
    # 3.2.9 Form-style query continuation
    ("{&who}", "&who=fred"),
    ("{&half}", "&half=50%25"),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
    ("{&var:3}", "&var=val"),
    ("{&list}", "&list=red,green,blue"),
    ("{&list*}", "&list=red&list=green&list=blue"),
    ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
    ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
]


@pytest.mark.parametrize(("template", "expected"), LEVEL_EXAMPLES)
def test_rfc_level_examples(template: str, expected: str) -> None:
    assert UriTemplate(template).expand(RFC_VARS) == expected


@pytest.mark.parametrize(("template", "expected"), SECTION_3_2_EXAMPLES)
def test_rfc_section_3_2_examples(template: str, expected: str) -> None:
    assert UriTemplate(template).expand(RFC_VARS) == expected


def test_expand_keywords_and_mapping() -> None:
    t = UriTemplate("users/{id}/posts{?page,sort}")
    assert t.expand(id="42", page="2") == "users/42/posts?page=2"
    assert t.expand({"id": "42", "sort": "new"}, sort="old") == "users/42/posts?sort=old"
    assert t.expand(id=7, page=1.5) == "users/7/posts?page=1.5"
    assert t.expand() == "users//posts"


def test_expand_encoding() -> None:
    assert UriTemplate("{x}").expand(x="é €/") == "%C3%A9%20%E2%82%AC%2F"
    # Reserved expansion keeps valid triplets but encodes a lone '%'.
    assert UriTemplate("{+x}").expand(x="a%20b%zz%") == "a%20b%25zz%25"
    assert UriTemplate("{#x}").expand(x="%2F/") == "#%2F/"
    # Literal text not allowed in a URI is percent-encoded; reserved literals stay.
    assert UriTemplate("file:///docs/café {x}").expand(x="a") == "file:///docs/caf%C3%A9%20a"
    assert UriTemplate("{x:2}").expand(x="éèà") == "%C3%A9%C3%A8"
    assert UriTemplate("{/x}").expand(x=[]) == ""
    # A triplet at the very end of the value passes too; one cut short there is a lone '%'.
    assert UriTemplate("{+x}").expand(x="a%41") == "a%41"
    assert UriTemplate("{#x}").expand(x="%C3%A9") == "#%C3%A9"
    assert UriTemplate("{+x}").expand(x="a%4") == "a%254"
    assert UriTemplate("{+x}").expand(x="a%") == "a%25"
    assert UriTemplate("{+x}").expand(x="%G1") == "%25G1"  # the first character after '%' is no hex digit
    assert UriTemplate("{x}").expand(x="a%41") == "a%2541"  # not in simple expansion
    # After a query, a fragment; the '#' of a query value is encoded.
    assert UriTemplate("s{?q}{#f}").expand(q="a b#", f="x/y#z") == "s?q=a%20b%23#x/y#z"
    assert UriTemplate("{;x:3,x}").expand(x="abcdef") == ";x=abc;x=abcdef"


def test_named_empty_values_of_exploded_composites() -> None:
    # {;...} writes an empty value as the name alone, {?...} and {&...} as "name=".
    keys = {"a": "", "b": "1"}
    assert UriTemplate("{;keys*}").expand(keys=keys) == ";a;b=1"
    assert UriTemplate("{?keys*}").expand(keys=keys) == "?a=&b=1"
    assert UriTemplate("{;list*}").expand(list=["", "x"]) == ";list;list=x"
    assert UriTemplate("{&list*}").expand(list=["", "x"]) == "&list=&list=x"


def test_expand_errors() -> None:
    with pytest.raises(ValueError, match="composite"):
        UriTemplate("{list:2}").expand(list=["a"])


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (object(), "variable 'x': unsupported value type object"),
        ({"a"}, "variable 'x': unsupported value type set"),
        ([1, None], "variable 'x': list items must be str, int or float"),
        ({"a": None}, "variable 'x': mapping keys and values must be str, int or float"),
        ({"a": "1", None: "2"}, "variable 'x': mapping keys and values must be str, int or float"),
    ],
)
def test_expand_type_errors(value: object, message: str) -> None:
    with pytest.raises(TypeError) as refused:
        UriTemplate("{x}").expand(x=value)  # type: ignore[arg-type]
    assert str(refused.value) == message
