"""WWW-Authenticate challenges as a resource server writes them and a client reads them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpbind.oauth.challenge import bearer_challenge, format_challenge, parse_challenges


def test_a_bearer_challenge_with_its_parameters() -> None:
    header = (
        'Bearer error="insufficient_scope", scope="files:read files:write", '
        'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"'
    )
    challenge = bearer_challenge(header)
    assert challenge is not None
    assert challenge.error == "insufficient_scope"
    assert challenge.scope == "files:read files:write"
    assert challenge.resource_metadata == "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"


def test_the_bearer_challenge_is_found_among_others_and_token_values_are_read() -> None:
    challenges = parse_challenges('Basic realm="site", BEARER error=invalid_token, scope="a"')
    assert [c.scheme for c in challenges] == ["Basic", "BEARER"]
    bearer = bearer_challenge('Basic realm="site", BEARER error=invalid_token, scope="a"')
    assert bearer is not None and bearer.error == "invalid_token" and bearer.scope == "a"


def test_parameter_names_are_case_insensitive_and_quoted_pairs_unescaped() -> None:
    challenge = bearer_challenge(r'Bearer Scope="say \"hi\"", ERROR="invalid_token"')
    assert challenge is not None
    assert challenge.scope == 'say "hi"'
    assert challenge.error == "invalid_token"


@pytest.mark.parametrize("header", ["", "   ", ",,,", '"not a scheme"', "=x"])
def test_headers_without_a_challenge_give_none(header: str) -> None:
    assert parse_challenges(header) == []
    assert bearer_challenge(header) is None


def test_parsing_stops_at_text_that_is_no_challenge_keeping_what_came_before() -> None:
    challenges = parse_challenges('Bearer scope="a", =broken, Basic realm="x"')
    assert [(c.scheme, c.params) for c in challenges] == [("Bearer", {"scope": "a"})]


def test_a_bare_scheme_and_a_token68_challenge() -> None:
    challenges = parse_challenges("Negotiate YWJj==, Bearer")
    assert [c.scheme for c in challenges] == ["Negotiate", "Bearer"]
    assert challenges[1].params == {}


def test_format_quotes_escapes_and_skips_none() -> None:
    header = format_challenge("Bearer", error="invalid_token", scope=None, resource_metadata='https://a/"b"')
    assert header == 'Bearer error="invalid_token", resource_metadata="https://a/\\"b\\""'
    assert format_challenge("Bearer") == "Bearer"


def test_format_refuses_control_characters() -> None:
    with pytest.raises(ValueError, match="control character"):
        format_challenge("Bearer", scope="a\r\nSet-Cookie: x=y")


_param_text = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40)


@given(error=_param_text, scope=_param_text, resource_metadata=_param_text)
def test_what_is_formatted_parses_back(error: str, scope: str, resource_metadata: str) -> None:
    header = format_challenge("Bearer", error=error, scope=scope, resource_metadata=resource_metadata)
    challenge = bearer_challenge(header)
    assert challenge is not None
    assert (challenge.error, challenge.scope, challenge.resource_metadata) == (
        error,
        scope,
        resource_metadata,
    )
