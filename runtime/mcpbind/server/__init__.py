"""The server endpoint: :class:`~mcpbind.server.server.Server`, its tools, resources and prompts,
and what binds a Python function to them. Import ``Server`` from :mod:`mcpbind`."""
