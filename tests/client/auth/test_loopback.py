"""The loopback redirect of the authorization code flow: the test plays the browser with httpx
(and a raw socket where a browser would misbehave) against ``LoopbackAuthorizer``."""

from __future__ import annotations

import io
import threading
import webbrowser
from typing import Any

import anyio
import httpx
import pytest

from mcpbind.client.auth.loopback import LoopbackAuthorizer
from mcpbind.oauth.tokens import OAuthError

pytestmark = pytest.mark.anyio

AUTHORIZE = "https://as.example/authorize?client_id=c&state=s1"


async def authorize_while(
    authorizer: LoopbackAuthorizer, browse: Any, url: str = AUTHORIZE
) -> tuple[str, list[httpx.Response]]:
    """Run the authorizer on ``url`` while ``browse(client)`` plays the browser; the URL it
    returned and the responses the browser got."""
    returned: list[str] = []
    responses: list[httpx.Response] = []

    async def wait() -> None:
        returned.append(await authorizer(url))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group, httpx.AsyncClient() as client:
            group.start_soon(wait)
            await browse(client, responses)
    return returned[0], responses


async def test_redirect_with_code_is_returned_and_the_browser_told_to_close(anyio_backend: str) -> None:
    output = io.StringIO()
    async with LoopbackAuthorizer(open_browser=False, output=output) as authorizer:
        assert authorizer.redirect_uri == f"http://127.0.0.1:{authorizer.port}/callback"
        assert authorizer.port != 0

        async def browse(client: httpx.AsyncClient, responses: list[httpx.Response]) -> None:
            responses.append(
                await client.get(authorizer.redirect_uri + "?code=abc&state=s1&iss=https%3A%2F%2Fas")
            )

        url, responses = await authorize_while(authorizer, browse)
    assert url == authorizer.redirect_uri + "?code=abc&state=s1&iss=https%3A%2F%2Fas"
    assert responses[0].status_code == 200
    assert "close this window" in responses[0].text
    assert responses[0].headers["referrer-policy"] == "no-referrer"
    assert responses[0].headers["content-type"].startswith("text/html")
    assert AUTHORIZE in output.getvalue()


async def test_wrong_requests_are_refused_and_the_wait_goes_on(anyio_backend: str) -> None:
    async with LoopbackAuthorizer(open_browser=False, output=io.StringIO(), path="/cb") as authorizer:
        base = authorizer.redirect_uri

        async def browse(client: httpx.AsyncClient, responses: list[httpx.Response]) -> None:
            responses.append(await client.get(base.replace("/cb", "/favicon.ico")))
            responses.append(await client.get(base + "?state=s1"))
            responses.append(await client.post(base + "?code=abc&state=s1"))
            responses.append(await client.get(base + "?code=stale&state=s0"))  # an earlier one's
            responses.append(await client.get(base + "?code=forged"))
            responses.append(await client.get(base + "?code=right&state=s1"))

        url, responses = await authorize_while(authorizer, browse)
    assert [response.status_code for response in responses] == [404, 400, 405, 400, 400, 200]
    assert url == base + "?code=right&state=s1"


async def test_an_error_redirect_is_returned_for_the_flow_to_report(anyio_backend: str) -> None:
    async with LoopbackAuthorizer(open_browser=False, output=io.StringIO()) as authorizer:
        target = (
            authorizer.redirect_uri + "?error=access_denied&error_description=%3Cb%3Eno%3C%2Fb%3E&state=s1"
        )

        async def browse(client: httpx.AsyncClient, responses: list[httpx.Response]) -> None:
            responses.append(await client.get(target))

        url, responses = await authorize_while(authorizer, browse)
    assert url == target
    assert "Authorization failed" in responses[0].text
    assert "access_denied" in responses[0].text


async def test_the_error_is_escaped_in_the_page(anyio_backend: str) -> None:
    async with LoopbackAuthorizer(open_browser=False, output=io.StringIO()) as authorizer:

        async def browse(client: httpx.AsyncClient, responses: list[httpx.Response]) -> None:
            responses.append(
                await client.get(
                    authorizer.redirect_uri, params={"error": "<script>x</script>", "state": "s1"}
                )
            )

        _, responses = await authorize_while(authorizer, browse)
    assert "<script>" not in responses[0].text
    assert "&lt;script&gt;" in responses[0].text


async def test_idle_and_garbage_connections_hold_up_nothing(anyio_backend: str) -> None:
    async with LoopbackAuthorizer(open_browser=False, output=io.StringIO()) as authorizer:
        garbage_answer: list[bytes] = []

        async def browse(client: httpx.AsyncClient, responses: list[httpx.Response]) -> None:
            idle = await anyio.connect_tcp("127.0.0.1", authorizer.port)  # a browser's spare connection
            async with idle, await anyio.connect_tcp("127.0.0.1", authorizer.port) as garbage:
                await garbage.send(b"\x16\x03\x01 not http\r\n\r\n")
                garbage_answer.append(await garbage.receive())
                responses.append(await client.get(authorizer.redirect_uri + "?code=c&state=s1"))

        url, _ = await authorize_while(authorizer, browse)
    assert garbage_answer[0].startswith(b"HTTP/1.1 400")
    assert url.endswith("?code=c&state=s1")


async def test_it_serves_one_redirect_per_call(anyio_backend: str) -> None:
    async with LoopbackAuthorizer(open_browser=False, output=io.StringIO()) as authorizer:
        for code in ("first", "second"):

            async def browse(
                client: httpx.AsyncClient, responses: list[httpx.Response], code: str = code
            ) -> None:
                responses.append(await client.get(authorizer.redirect_uri + f"?code={code}&state=s1"))

            url, _ = await authorize_while(authorizer, browse)
            assert url.endswith(f"?code={code}&state=s1")


async def test_no_redirect_in_time_is_a_timeout(anyio_backend: str) -> None:
    async with LoopbackAuthorizer(open_browser=False, output=io.StringIO(), timeout=0.05) as authorizer:
        with pytest.raises(OAuthError, match="no authorization redirect") as caught:
            await authorizer(AUTHORIZE)
    assert caught.value.error == "authorization_timeout"


async def test_a_given_port_is_used_and_freed(anyio_backend: str) -> None:
    async with LoopbackAuthorizer(open_browser=False) as first:
        port = first.port
    async with LoopbackAuthorizer(open_browser=False, port=port) as second:
        assert second.redirect_uri == f"http://127.0.0.1:{port}/callback"


async def test_redirect_uri_needs_the_listener(anyio_backend: str) -> None:
    authorizer = LoopbackAuthorizer()
    with pytest.raises(RuntimeError, match="enter it"):
        _ = authorizer.redirect_uri
    with pytest.raises(RuntimeError, match="enter it"):
        await authorizer(AUTHORIZE)


@pytest.mark.parametrize("browser_opens", [True, False])
async def test_the_browser_is_opened_and_the_url_printed(
    anyio_backend: str, browser_opens: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []
    called = threading.Event()

    def fake_open(url: str) -> bool:
        opened.append(url)
        called.set()
        if not browser_opens:
            raise webbrowser.Error("could not locate runnable browser")
        return True

    monkeypatch.setattr(webbrowser, "open", fake_open)
    output = io.StringIO()
    async with LoopbackAuthorizer(output=output) as authorizer:

        async def browse(client: httpx.AsyncClient, responses: list[httpx.Response]) -> None:
            await anyio.to_thread.run_sync(called.wait)  # the browser opens, then visits
            responses.append(await client.get(authorizer.redirect_uri + "?code=c&state=s1"))

        url, _ = await authorize_while(authorizer, browse)
    assert opened == [AUTHORIZE]
    assert url.endswith("?code=c&state=s1")
    assert output.getvalue() == f"Opening a browser to authorize; if none opens, visit:\n  {AUTHORIZE}\n"


def test_a_relative_path_is_refused() -> None:
    with pytest.raises(ValueError, match="must start with"):
        LoopbackAuthorizer(path="callback")


async def test_without_a_state_any_redirect_with_a_code_is_taken(anyio_backend: str) -> None:
    async with LoopbackAuthorizer(open_browser=False, output=io.StringIO()) as authorizer:

        async def browse(client: httpx.AsyncClient, responses: list[httpx.Response]) -> None:
            responses.append(await client.get(authorizer.redirect_uri + "?code=x"))

        url, _ = await authorize_while(authorizer, browse, url="https://as.example/authorize?client_id=c")
    assert url == authorizer.redirect_uri + "?code=x"
