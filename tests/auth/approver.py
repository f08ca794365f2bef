"""The user of a sign-in in the tests: :class:`Approver` follows the authorization URL to an
authorization server that approves at once, and hands back where it redirects to."""

from __future__ import annotations

import httpx

__all__ = ["Approver"]


class Approver:
    """The user at the browser: opens the authorization URL, where the authorization server
    approves at once, and hands back the URL it redirects to (answered with one of
    ``redirects``; the local authorization server's is 302). ``urls``: each URL opened."""

    def __init__(self, redirects: tuple[int, ...] = (302,)) -> None:
        self.urls: list[str] = []
        self.redirects = redirects

    async def __call__(self, url: str) -> str:
        self.urls.append(url)
        async with httpx.AsyncClient(follow_redirects=False) as http:
            response = await http.get(url)
        assert response.status_code in self.redirects, response.text
        location: str = response.headers["location"]
        return location
