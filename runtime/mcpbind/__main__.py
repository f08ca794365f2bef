"""``python -m mcpbind``: the ``mcpbind`` command."""

import sys

from mcpbind.cli import main

sys.exit(main())
