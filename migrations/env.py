"""Alembic's environment script: the work is done by :mod:`telesnap.storage.migrate`."""

from alembic import context

from telesnap.storage.migrate import run_environment

# Alembic installs its context before running this file; a plain import (such
# as pytest collecting doctests) must not start migrating.
if getattr(context, "_proxy", None) is not None:
    run_environment()
