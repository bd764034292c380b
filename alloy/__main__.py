"""``python -m alloy``: the same as the ``alloy`` command."""

from .cli import main

raise SystemExit(main())
