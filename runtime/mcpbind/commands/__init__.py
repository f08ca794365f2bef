"""The two commands of the ``mcpbind`` command line (:mod:`mcpbind.cli`): ``serve``
(:mod:`~mcpbind.commands.serve`) and ``call`` (:mod:`~mcpbind.commands.call`), with what both
use: loading a server from a file or module (:mod:`~mcpbind.commands.loading`) and the failures
the command reports in one line (:mod:`~mcpbind.commands.failures`)."""
