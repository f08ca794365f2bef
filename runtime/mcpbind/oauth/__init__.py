"""OAuth 2.1 pieces shared by MCP's two sides of authorization: the documents the client discovers
and the resource server serves (:mod:`~mcpbind.oauth.metadata`), client registration
(:mod:`~mcpbind.oauth.registration`), token responses and OAuth errors
(:mod:`~mcpbind.oauth.tokens`), ``WWW-Authenticate`` challenges (:mod:`~mcpbind.oauth.challenge`)
and what a verified access token says (:mod:`~mcpbind.oauth.access_token`). Plain data with no I/O:
the flows live in :mod:`mcpbind.client.auth` and :mod:`mcpbind.server.auth`."""
