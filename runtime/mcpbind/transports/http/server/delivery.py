"""What a Streamable HTTP app can carry to the client besides responses, by its mode: the one
place that decides it (:func:`delivery_for` for the handshake versions,
:func:`stateless_protocol_delivery` for 2026-07-28 requests)."""

from __future__ import annotations

from mcpbind.protocol.connection import FULL_DELIVERY, Delivery

__all__ = ["delivery_for", "stateless_protocol_delivery"]


def delivery_for(*, stateless: bool, json_response: bool, get_stream: bool) -> Delivery:
    """What a :class:`~mcpbind.transports.http.server.app.StreamableHTTPApp` with these options can carry to the client besides
    responses: the one place that decides it (the capabilities declared, the requests to the
    client refused, the backlog kept all follow from it).

    Messages unrelated to a request travel only on a GET stream (and need a session). What a
    request's handler sends before its response travels on the POST's SSE stream, or on the
    GET stream when requests are answered with JSON. The client's answers to the server's
    requests reach the handler only in a session.
    """
    if stateless:
        return Delivery(
            unrelated=False,
            related=not json_response,
            answers=False,
            mode="stateless mode",
            why="StreamableHTTPApp(stateless=True): each POST stands alone, so no answer from the "
            "client could reach the server",
            remedy="serve with stateless=False to send them",
        )
    if get_stream:
        return FULL_DELIVERY
    if json_response:
        return Delivery(
            unrelated=False,
            related=False,
            mode="JSON-response mode without a GET stream",
            why="StreamableHTTPApp(json_response=True, get_stream=False): only the response to a "
            "request reaches the client",
            remedy="serve with get_stream=True to send them",
        )
    return Delivery(
        unrelated=False,
        mode="a session without a GET stream",
        why="StreamableHTTPApp(get_stream=False): only the SSE stream answering a request of the "
        "client's reaches it",
        remedy="serve with get_stream=True to send them",
    )


def stateless_protocol_delivery(*, json_response: bool) -> Delivery:
    """What a 2026-07-28 request's connection can carry to the client besides its response.

    Its handler's progress and log messages travel on the SSE stream answering it (not with
    ``json_response``, where every answer but a ``subscriptions/listen`` one is JSON). List
    changes and resource updates reach a client on the stream answering its
    ``subscriptions/listen`` (always SSE): ``listChanged`` and ``resources.subscribe`` are
    declared. No request ever goes to the client: a handler needing input asks for it in its
    result (multi round-trip requests), and nothing could bring an answer back.
    """
    return Delivery(
        unrelated=True,
        related=not json_response,
        answers=False,
        mode="the stateless protocol",
        why="each request is answered on its own and the client answers no request of the server's",
        remedy="ask for the client's input in the result instead (an input-required result)",
    )
