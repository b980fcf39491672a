"""``python -m telesnap``: the ``telesnap`` command (see :mod:`telesnap.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
