"""The client endpoint: :class:`~mcpbind.client.client.Client` (import it from :mod:`mcpbind`),
the :class:`~mcpbind.client.remote.RemoteServer` it yields once connected, the handlers it
answers a server with (:mod:`~mcpbind.client.callbacks`) and walking list pages
(:mod:`~mcpbind.client.pages`)."""
