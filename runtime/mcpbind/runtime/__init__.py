"""The session driver: runs a protocol connection over a transport with anyio (handler tasks,
deadlines, cancellation), and the request context handlers see. The only layer that knows about
tasks and cancel scopes."""
