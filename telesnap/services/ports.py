"""What the services need from outside: a way to open units of work.

The services own this port; :class:`telesnap.storage.uow.UnitsOfWork` is the
real one (a transaction on SQLite or PostgreSQL), and fast unit tests may pass
an in-memory fake instead.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Protocol

from ..storage.uow import UnitOfWork


class UnitOfWorkFactory(Protocol):
    """Opens one unit of work: ``async with units() as uow:`` commits on a clean exit.

    ``read_only=True`` is for reads that change nothing (see :class:`UnitOfWork`).
    """

    def __call__(self, *, read_only: bool = False) -> AbstractAsyncContextManager[UnitOfWork]:
        """A new, not yet open, unit of work."""
        ...
