"""What the services need from outside: a way to open units of work.

The services own this port; :class:`telesnap.storage.uow.UnitsOfWork` is the real one, and
fast unit tests may pass an in-memory fake.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Protocol

from ..storage.uow import UnitOfWork


class UnitOfWorkFactory(Protocol):
    """Opens one unit of work: ``async with units() as uow:`` commits on a clean exit."""

    def __call__(self, *, read_only: bool = False) -> AbstractAsyncContextManager[UnitOfWork]:
        """A new, not yet open, unit of work."""
        ...
