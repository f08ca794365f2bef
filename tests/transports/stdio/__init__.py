"""Tests of mcpbind.transports.stdio, one file per module (framing, stream, fdio, process) plus
sessions and hostile input over real stdio pipes."""
