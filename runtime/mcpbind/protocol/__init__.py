"""The sans-io protocol core: the wire codec, the method table, typed unions and the connection
state machine. Bytes in, events and bytes out; no I/O, no event loop, no protocol version named
(those come from :mod:`mcpbind.versions`)."""
