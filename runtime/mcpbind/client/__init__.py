"""The client endpoint: :class:`~mcpbind.client.client.Client` (import it from :mod:`mcpbind`),
the :class:`~mcpbind.client.remote.RemoteServer` it yields once connected, the handlers it
answers a server with (:mod:`~mcpbind.client.callbacks`) and walking list pages
(:mod:`~mcpbind.client.pages`). For the stateless MCP 2026-07-28: the request metadata
(:mod:`~mcpbind.client.stateless`), multi round-trip requests (:mod:`~mcpbind.client.mrtr`),
change events of ``listen()`` (:mod:`~mcpbind.client.subscriptions`) and the ``ttlMs`` cache
(:mod:`~mcpbind.client.caching`)."""
