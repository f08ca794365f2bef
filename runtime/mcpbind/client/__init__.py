"""The client endpoint: :class:`~mcpbind.client.client.Client`. Import it from :mod:`mcpbind`."""
