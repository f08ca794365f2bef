"""The tests' Redis harness: a real redis-server on 127.0.0.1 that a test can stop and start."""

from __future__ import annotations

from tests.redis_harness import RedisServer


def test_redis_answers_stops_and_comes_back_on_its_port(redis_server: RedisServer, redis_url: str) -> None:
    assert redis_url == f"redis://127.0.0.1:{redis_server.port}/0"
    assert redis_server.ping()
    redis_server.stop()
    assert not redis_server.ping()
    redis_server.start()
    assert redis_server.ping()


def test_channels_lists_the_channels_subscribed_to(redis_url: str, redis_server: RedisServer) -> None:
    import socket

    assert redis_server.channels("probe:*") == set()
    with socket.create_connection(("127.0.0.1", redis_server.port), timeout=2.0) as conn:
        conn.sendall(b"SUBSCRIBE probe:one probe:two\r\n")
        replies = b""
        while replies.count(b"subscribe") < 2:
            replies += conn.recv(256)
        assert redis_server.channels("probe:*") == {"probe:one", "probe:two"}
        assert redis_server.channels("probe:o*") == {"probe:one"}
