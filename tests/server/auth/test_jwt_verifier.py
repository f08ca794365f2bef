"""JWTVerifier: JWTs checked against the issuer's JWK Set (fetched once for a burst, refetched
for an unknown kid at most once per interval), the algorithm allow-list, the time window with
leeway, the issuer and the audience; bad tokens refused before any cryptography where that
is possible."""

from __future__ import annotations

import time
from collections.abc import Callable

import anyio
import pytest
from anyio import wait_all_tasks_blocked

from mcpbind.server.auth import InvalidToken, JWTVerifier, VerifierUnavailable
from tests.server.auth.tokens import (
    ISSUER,
    JWKS_URL,
    RESOURCE,
    KeySetServer,
    ec_key,
    hs256_with_public_key,
    mint,
    rsa_key,
    unsigned,
)

pytestmark = pytest.mark.anyio


def verifier(keys: KeySetServer, **options: object) -> JWTVerifier:
    return JWTVerifier(
        issuer=ISSUER,
        audience=RESOURCE,
        jwks_url=JWKS_URL,
        http_client=keys.client(),
        **options,  # type: ignore[arg-type]
    )


async def test_a_valid_token_gives_its_subject_client_scopes_and_claims(anyio_backend: str) -> None:
    check = verifier(KeySetServer())
    token = mint(extra="x")
    access = await check.verify(token)
    assert (access.subject, access.client_id, access.issuer) == ("alice", "client-1", ISSUER)
    assert access.scopes == frozenset({"mcp", "read"})
    assert access.audience == (RESOURCE,)
    assert access.claims["extra"] == "x"
    assert access.token == token
    assert token not in repr(access)


async def test_ec_keys_scp_lists_and_audience_lists(anyio_backend: str) -> None:
    check = verifier(KeySetServer(rsa_key(), ec_key()))
    access = await check.verify(
        mint(ec_key(), scope=None, scp=["a", "b"], aud=["https://other.example", RESOURCE + "/"])
    )
    assert access.scopes == frozenset({"a", "b"})


async def test_the_leeway_allows_a_little_clock_skew(anyio_backend: str) -> None:
    now = int(time.time())
    check = verifier(KeySetServer(), leeway=60)
    await check.verify(mint(exp=now - 30, nbf=now + 30))
    strict = verifier(KeySetServer(), leeway=0)
    with pytest.raises(InvalidToken):
        await strict.verify(mint(exp=now - 30))


BAD: dict[str, Callable[[], str]] = {
    "expired": lambda: mint(exp=int(time.time()) - 3600),
    "not yet valid": lambda: mint(nbf=int(time.time()) + 3600),
    "issued in the future": lambda: mint(iat=int(time.time()) + 3600),
    "without exp": lambda: mint(exp=None),
    "wrong audience": lambda: mint(aud="https://other.example/mcp"),
    "no audience": lambda: mint(aud=None),
    "wrong issuer": lambda: mint(iss="https://evil.example.com"),
    "issuer with an added slash": lambda: mint(iss=ISSUER + "/"),
    "alg none": unsigned,
    "HS256 signed with the public key": hs256_with_public_key,
    "oversized": lambda: mint(padding="x" * 10_000),
    "not a JWT": lambda: "opaque-token",
    "two segments": lambda: ".".join(mint().split(".")[:2]),
    "bad characters": lambda: mint() + "%",
    "header not JSON": lambda: "bm90IGpzb24." + ".".join(mint().split(".")[1:]),
    "signature of another token": lambda: ".".join(mint(sub="bob").split(".")[:2] + mint().split(".")[2:]),
    "signed by a key outside the set": lambda: mint(ec_key("stranger")),
    "scope of the wrong type": lambda: mint(scope=7),
}


@pytest.mark.parametrize("name", list(BAD))
async def test_bad_tokens_are_refused(anyio_backend: str, name: str) -> None:
    check = verifier(KeySetServer())
    with pytest.raises(InvalidToken):
        await check.verify(BAD[name]())


async def test_tokens_refused_before_the_key_set_is_fetched(anyio_backend: str) -> None:
    """Malformed, oversized, unsigned and HMAC tokens cost no fetch (nor any cryptography)."""
    keys = KeySetServer()
    check = verifier(keys)
    for name in (
        "oversized",
        "not a JWT",
        "two segments",
        "bad characters",
        "alg none",
        "HS256 signed with the public key",
    ):
        with pytest.raises(InvalidToken):
            await check.verify(BAD[name]())
    assert keys.fetches == 0


async def test_a_burst_of_requests_fetches_the_key_set_once(anyio_backend: str) -> None:
    keys = KeySetServer()
    keys.gate = anyio.Event()
    check = verifier(keys)
    verified: list[str | None] = []

    async def one() -> None:
        verified.append((await check.verify(mint())).subject)

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            for _ in range(20):
                tg.start_soon(one)
            await wait_all_tasks_blocked()  # one fetching, the others waiting for its keys
            assert keys.fetches == 1
            keys.gate.set()
    assert verified == ["alice"] * 20
    assert keys.fetches == 1


async def test_an_unknown_kid_refetches_the_set_once_per_interval(anyio_backend: str) -> None:
    """A rotation: the first token with a new key refetches the set (and passes once the set
    has it); tokens naming keys the set lacks do not refetch it again within the interval."""
    clock = [1000.0]
    keys = KeySetServer(rsa_key())
    check = verifier(keys, jwks_min_refresh_interval=30.0, clock=lambda: clock[0])
    await check.verify(mint())
    assert keys.fetches == 1
    with pytest.raises(InvalidToken):
        await check.verify(mint(ec_key("unknown")))
    assert keys.fetches == 1  # (fetched less than the interval ago)
    clock[0] += 31
    keys.keys.append(ec_key("rotated"))
    assert (await check.verify(mint(ec_key("rotated")))).subject == "alice"
    assert keys.fetches == 2
    for _ in range(5):
        with pytest.raises(InvalidToken):
            await check.verify(mint(ec_key("unknown")))
    assert keys.fetches == 2
    clock[0] += 31
    with pytest.raises(InvalidToken):
        await check.verify(mint(ec_key("unknown")))
    assert keys.fetches == 3


async def test_the_key_set_is_refetched_when_old(anyio_backend: str) -> None:
    clock = [0.0]
    keys = KeySetServer()
    check = verifier(keys, jwks_max_age=100.0, clock=lambda: clock[0])
    await check.verify(mint())
    clock[0] = 50.0
    await check.verify(mint())
    assert keys.fetches == 1
    clock[0] = 150.0
    await check.verify(mint())
    assert keys.fetches == 2


async def test_an_unreachable_key_set(anyio_backend: str) -> None:
    """No key set ever fetched: VerifierUnavailable (503), not a verdict on the token; a set
    fetched before goes on serving while the server is down."""
    clock = [0.0]
    keys = KeySetServer()
    keys.failing = True
    check = verifier(keys, jwks_max_age=100.0, clock=lambda: clock[0])
    with pytest.raises(VerifierUnavailable):
        await check.verify(mint())
    with pytest.raises(VerifierUnavailable):
        await check.verify(mint())
    assert keys.fetches == 1  # (retried only after the refresh interval)
    clock[0] = 31.0
    keys.failing = False
    await check.verify(mint())
    clock[0] = 500.0
    keys.failing = True
    assert (await check.verify(mint())).subject == "alice"


@pytest.mark.parametrize("algorithms", [["none"], ["HS256"], ["RS256", "HS512"], []])
def test_the_allow_list_takes_asymmetric_algorithms_only(algorithms: list[str]) -> None:
    with pytest.raises(ValueError, match="algorithms"):
        JWTVerifier(issuer=ISSUER, audience=RESOURCE, jwks_url=JWKS_URL, algorithms=algorithms)


async def test_an_algorithm_left_out_of_the_allow_list_is_refused(anyio_backend: str) -> None:
    check = verifier(KeySetServer(rsa_key(), ec_key()), algorithms=["ES256"])
    assert (await check.verify(mint(ec_key()))).subject == "alice"
    with pytest.raises(InvalidToken):
        await check.verify(mint())


@pytest.mark.parametrize(
    ("audience", "accepted"),
    [
        ("HTTP://127.0.0.1/mcp", True),  # scheme and host in upper case name the same server
        (RESOURCE + "/", True),
        ("http://127.0.0.1/MCP", False),  # (a path is case-sensitive)
        ("http://127.0.0.1/mcp/other", False),
        ("http://127.0.0.1:8080/mcp", False),
        ("https://127.0.0.1/mcp", False),
    ],
)
async def test_how_the_audience_is_compared(anyio_backend: str, audience: str, accepted: bool) -> None:
    check = verifier(KeySetServer())
    if accepted:
        assert (await check.verify(mint(aud=audience))).audience == (audience,)
    else:
        with pytest.raises(InvalidToken):
            await check.verify(mint(aud=audience))
