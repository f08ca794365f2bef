"""Transports: framed messages in and out (:mod:`.base`), over memory, stdio and HTTP."""
