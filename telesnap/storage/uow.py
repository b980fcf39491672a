"""The unit of work: one session, one transaction, every repository."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Any, ClassVar, Generic, Self, TypeVar

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import ORMExecuteState, Session

from ..support.batched import Batched
from .database import read_only_options
from .errors import ReadOnlyError
from .outbox_watch import OutboxWatch
from .repositories import (
    AlertRepository,
    ChatRepository,
    ChatSettingsRepository,
    CommittedMarks,
    GameRepository,
    HistoryRepository,
    InboxRepository,
    OutboxRepository,
    RaceRepository,
    StatsRepository,
    TimerRepository,
    UserRepository,
)

__all__ = ["GroupCommit", "UnitOfWork", "UnitsOfWork", "Writer"]


_R = TypeVar("_R")


class _Repository(Generic[_R]):
    """A unit's repository, made on its session at first use (most units need two or three)."""

    names: ClassVar[list[str]] = []
    """Every repository's attribute name (what a unit forgets when it ends)."""

    def __init__(self, make: Callable[[UnitOfWork], _R]) -> None:
        self._make = make
        self._name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name
        _Repository.names.append(name)

    def __get__(self, uow: UnitOfWork, owner: type | None = None) -> _R:
        repository = uow.__dict__[self._name] = self._make(uow)
        return repository


class UnitOfWork:
    """``async with UnitOfWork(factory) as uow:`` commits on a clean exit, else rolls back.

    SQLite serialises units from their first statement; on PostgreSQL locked reads serialise
    those changing one game. ``read_only=True`` never takes SQLite's write lock, refuses writes
    with :class:`~.errors.ReadOnlyError` before SQL, and still commits at the end: a rollback
    would expire the objects it read.
    """

    def __init__(
        self,
        factory: async_sessionmaker[AsyncSession],
        *,
        read_only: bool = False,
        marks: CommittedMarks | None = None,
        watch: OutboxWatch | None = None,
    ) -> None:
        self._factory = factory
        self._session: AsyncSession | None = None
        self._open = False
        self.read_only = read_only
        self._marks = marks if marks is not None else CommittedMarks()
        self._watch = watch
        self._after_commit: list[Callable[[], None]] = []

    @property
    def session(self) -> AsyncSession:
        """The unit's session (in ``async with``), made at first use: a no-op unit needs none."""
        if not self._open:
            raise RuntimeError("the unit of work is not open: use it with 'async with'")
        if self._session is None:
            self._session = self._factory()
        return self._session

    async def __aenter__(self) -> Self:
        self._open = True
        if self.read_only:
            session = self.session
            session.sync_session.info[_READ_ONLY] = True
            dialect = session.get_bind().dialect.name
            # The options apply to the transaction's connection, so it is taken now.
            await session.connection(execution_options=read_only_options(dialect))
        return self

    users = _Repository(lambda uow: UserRepository(uow.session))
    chats = _Repository(lambda uow: ChatRepository(uow.session))
    settings = _Repository(lambda uow: ChatSettingsRepository(uow.session))
    games = _Repository(lambda uow: GameRepository(uow.session))
    history = _Repository(lambda uow: HistoryRepository(uow.session))
    updates = _Repository(lambda uow: InboxRepository(lambda: uow.session, uow._marks))
    """The inbox takes the session only when it runs a statement (see ``session``)."""
    timers = _Repository(lambda uow: TimerRepository(uow.session))
    races = _Repository(lambda uow: RaceRepository(uow.session))
    stats = _Repository(lambda uow: StatsRepository(uow.session))
    outbox = _Repository(lambda uow: OutboxRepository(uow.session))
    alerts = _Repository(lambda uow: AlertRepository(uow.session))

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        session = self._session
        try:
            if exc_type is None:
                if session is not None:
                    await session.commit()
                for callback in self._after_commit:
                    callback()
                if "updates" in self.__dict__:
                    self.updates.committed()
                if self._watch is not None and session is not None:
                    self._watch.committed(session.sync_session)
            elif session is not None:
                await session.rollback()
        finally:
            if "updates" in self.__dict__:
                self.updates.ended()  # after a commit that failed too
            for name in _Repository.names:  # made on this session: not for the next
                self.__dict__.pop(name, None)
            self._session = None
            self._open = False
            if session is not None:
                await session.close()

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` as soon as this unit of work has committed (not if it rolls back).

        It runs before anything awaits: before the rows it wrote wake their sender.
        """
        self._after_commit.append(callback)

    async def flush(self) -> None:
        """Send pending changes to the database without committing (to get ids, or fail early)."""
        await self.session.flush()


class UnitsOfWork:
    """Opens units of work on one session factory: the services' default (``services.ports``)."""

    def __init__(self, factory: async_sessionmaker[AsyncSession]) -> None:
        self._factory = factory
        self._marks = CommittedMarks()
        self.outbox_watch = OutboxWatch()
        """What its committed units did to the outbox (see :mod:`.outbox_watch`)."""

    def __call__(self, *, read_only: bool = False) -> UnitOfWork:
        """A new unit of work; units share committed marks, so re-marking an update is free."""
        return UnitOfWork(
            self._factory, read_only=read_only, marks=self._marks, watch=self.outbox_watch
        )


Writer = Callable[[UnitOfWork], Awaitable[None]]
"""A small write that needs no transaction of its own (it runs with the others waiting)."""


class GroupCommit:
    """Small writes share one transaction: those asked for while one runs go in the next.

    Each waits (one event-loop turn when none runs); one asked for twice in a batch runs once (it
    writes all its owner holds then). If the shared transaction fails, each writer runs again
    alone, so one failure fails only its own callers; a writer must therefore write again what a
    rolled-back transaction took. A rider (:meth:`ride_along`) runs in the next shared one, and
    alone too when that fails.
    """

    def __init__(self, units: Callable[[], AbstractAsyncContextManager[UnitOfWork]]) -> None:
        self._units = units
        self._batched: Batched[Writer, Exception | None] = Batched(self._run)
        self._riders: dict[Writer, None] = {}

    def ride_along(self, writer: Writer) -> None:
        """Run ``writer`` in the next shared transaction another write brings (none of its own).

        It rides again after one that failed.
        """
        self._riders[writer] = None

    async def write(self, writer: Writer) -> None:
        """Run ``writer`` in the next shared transaction; return once it has committed."""
        failure = await self._batched.add(writer)
        if failure is not None:
            raise failure

    @property
    def batches(self) -> int:
        """How many shared transactions it has run."""
        return self._batched.batches

    async def _run(self, writers: Sequence[Writer]) -> list[Exception | None]:
        distinct = list(dict.fromkeys(writers))
        riders = [rider for rider in self._riders if rider not in distinct]
        failure = await self._attempt([*distinct, *riders])
        if failure is None:
            outcomes: dict[Writer, Exception | None] = dict.fromkeys(distinct, None)
            for rider in riders:
                self._riders.pop(rider, None)
        elif len(distinct) == 1 and not riders:
            outcomes = {distinct[0]: failure}
        else:  # each once more alone: the failure is one writer's (or rider's), or a passing one
            outcomes = {writer: await self._attempt([writer]) for writer in distinct}
            for rider in riders:
                if await self._attempt([rider]) is None:
                    self._riders.pop(rider, None)
        for writer, outcome in outcomes.items():
            if outcome is None:
                self._riders.pop(writer, None)  # it wrote all it holds
        return [outcomes[writer] for writer in writers]

    async def _attempt(self, writers: Sequence[Writer]) -> Exception | None:
        """Run ``writers`` in one transaction; its failure, if it did not commit."""
        try:
            async with self._units() as uow:
                for writer in writers:
                    await writer(uow)
        except Exception as failure:
            return failure
        return None


_READ_ONLY = "telesnap_read_only"
"""The session info key of a read-only unit's session: any write it asks for is refused.

The listeners are the Session class's, set once: listening on each read-only session
cost more than the read itself."""


@event.listens_for(Session, "before_flush")
def _refuse_flush(session: Session, *_: Any) -> None:
    if session.info.get(_READ_ONLY):
        raise ReadOnlyError("a read-only unit of work has changes to write")


@event.listens_for(Session, "do_orm_execute")
def _refuse_write_statement(state: ORMExecuteState) -> None:
    writes = state.is_insert or state.is_update or state.is_delete
    if writes and state.session.info.get(_READ_ONLY):
        raise ReadOnlyError(f"a read-only unit of work cannot run {state.statement}")
