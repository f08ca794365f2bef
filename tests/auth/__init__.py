"""End-to-end authorization tests: a local OAuth 2.1 authorization server of the tests' own
(:mod:`tests.auth.server`, plain ASGI on 127.0.0.1), mcpbind's client signing in through it to
an mcpbind protected server (:mod:`tests.auth.stack`), machine clients, and the command line."""
