"""An asyncio SQLite connection that costs one thread hand-off per statement.

aiosqlite's three or four hand-offs per statement, each waiting for the GIL, set a busy bot's
pace rather than SQLite. Here a statement runs and fetches in one call, a ``BEGIN`` goes with
the first statement (nothing can run in between), and the pool's rollback after a commit is
free. The sqlite3 connection is used only on its own thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import sqlite3
import threading
from collections.abc import Callable, Sequence
from functools import partial
from queue import SimpleQueue
from typing import Any, TypeVar

__all__ = ["SQLiteConnection", "connect"]

_T = TypeVar("_T")
_Description = tuple[tuple[str, None, None, None, None, None, None], ...] | None


_BEGIN = re.compile(r"\s*BEGIN(\s+(DEFERRED|IMMEDIATE|EXCLUSIVE))?(\s+TRANSACTION)?\s*;?\s*", re.I)


class _Result:
    """What one statement left behind: its rows, their description and the counts."""

    __slots__ = ("description", "in_transaction", "lastrowid", "rowcount", "rows")

    def __init__(
        self,
        description: _Description,
        rows: list[Any],
        rowcount: int,
        lastrowid: int | None,
        in_transaction: bool,
    ) -> None:
        self.description = description
        self.rows = rows
        self.rowcount = rowcount
        self.lastrowid = lastrowid
        self.in_transaction = in_transaction


_NO_RESULT = _Result(None, [], -1, None, False)


def _run_statement(
    connection: sqlite3.Connection, operation: str, parameters: Any, many: bool
) -> _Result:
    cursor = connection.cursor()
    try:
        if many:
            cursor.executemany(operation, parameters)
        else:
            cursor.execute(operation, parameters)
        description = cursor.description
        rows = cursor.fetchall() if description else []
        return _Result(
            description, rows, cursor.rowcount, cursor.lastrowid, connection.in_transaction
        )
    finally:
        cursor.close()


class SQLiteCursor:
    """A cursor whose ``execute`` runs and fetches in one hand-off; fetches read memory."""

    arraysize = 1

    def __init__(self, connection: SQLiteConnection) -> None:
        self._connection = connection
        self._result = _NO_RESULT
        self._position = 0

    async def __aenter__(self) -> SQLiteCursor:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def description(self) -> _Description:
        """The columns of the last statement's rows (None if it returned none)."""
        return self._result.description

    @property
    def rowcount(self) -> int:
        """The rows the last statement changed (-1 when SQLite does not say)."""
        return self._result.rowcount

    @property
    def lastrowid(self) -> int | None:
        """The rowid of the last row inserted."""
        return self._result.lastrowid

    async def execute(self, operation: str, parameters: Sequence[Any] = ()) -> SQLiteCursor:
        """Run one statement and keep all of its rows; a ``BEGIN`` waits for the next statement."""
        connection = self._connection
        if not parameters and _BEGIN.fullmatch(operation):
            connection.hold_begin(operation)
            self._set(_NO_RESULT)
        else:
            self._set(await connection.run_statement(operation, parameters, many=False))
        return self

    async def executemany(
        self, operation: str, parameters: Sequence[Sequence[Any]]
    ) -> SQLiteCursor:
        """Run one statement once per parameter set."""
        self._set(await self._connection.run_statement(operation, parameters, many=True))
        return self

    async def fetchone(self) -> Any | None:
        """The next row, or None."""
        rows = self.fetchmany_now(1)
        return rows[0] if rows else None

    async def fetchmany(self, size: int | None = None) -> list[Any]:
        """Up to ``size`` more rows (``arraysize`` by default)."""
        return self.fetchmany_now(self.arraysize if size is None else size)

    async def fetchall(self) -> list[Any]:
        """Every row not fetched yet."""
        return self.fetchmany_now(len(self._result.rows))

    def fetchmany_now(self, size: int) -> list[Any]:
        """Up to ``size`` more rows, without waiting (they are in memory)."""
        rows = self._result.rows[self._position : self._position + size]
        self._position += len(rows)
        return rows

    async def close(self) -> None:
        """Drop the rows not fetched; the counts stay readable, as with sqlite3."""
        self._position = len(self._result.rows)

    async def setinputsizes(self, sizes: Sequence[Any]) -> None:
        """Nothing to do: part of the DB-API."""

    def setoutputsize(self, size: Any, column: Any = None) -> None:
        """Nothing to do: part of the DB-API."""

    def _set(self, result: _Result) -> None:
        self._result = result
        self._position = 0


class SQLiteConnection:
    """An asyncio connection to one SQLite database, used from its own thread.

    Shaped as SQLAlchemy's aiosqlite dialect expects, down to the private ``_tx`` queue of
    ``(future, function)`` pairs and the ``_conn``/``_connection`` it sets the isolation level on.
    """

    def __init__(self, connector: Callable[[], sqlite3.Connection]) -> None:
        self._connector = connector
        self._connection: sqlite3.Connection | None = None
        self._held_begin: str | None = None
        # Whether SQLite may have a transaction open (True when unsure).
        self._in_transaction = True
        self._tx: SimpleQueue[_Job | None] = SimpleQueue()
        # A daemon, as SQLAlchemy makes aiosqlite's: a connection never closed
        # must not keep the interpreter from exiting.
        self._thread = threading.Thread(
            target=_serve, args=(self._tx,), name="telesnap-sqlite", daemon=True
        )

    async def open(self) -> SQLiteConnection:
        """Start the connection's thread and open the sqlite3 connection there.

        A caller cancelled meanwhile ends only once the thread has closed what it opened: left open,
        it would hold the file, and create it again if it was removed.
        """
        self._thread.start()
        opened: list[sqlite3.Connection] = []
        try:
            self._connection = await self._in_thread(lambda: _kept(opened, self._connector()))
        except BaseException:
            closed = self._submit(partial(_close_all, opened))
            self._tx.put(None)
            with contextlib.suppress(Exception):
                await closed
            raise
        return self

    @property
    def _conn(self) -> sqlite3.Connection:
        return self._check_open()

    @property
    def isolation_level(self) -> str | None:
        """The sqlite3 driver's own transaction handling (None: it emits no BEGIN)."""
        return self._conn.isolation_level

    async def run(self, function: Callable[..., _T], *args: Any) -> _T:
        """Call ``function(sqlite3_connection, *args)`` on its thread, after any held ``BEGIN``."""
        begin, self._held_begin = self._held_begin, None
        self._in_transaction = True  # the function may open one
        return await self._in_thread(partial(_call_after, begin, function, self._conn, *args))

    def hold_begin(self, operation: str) -> None:
        """Keep a ``BEGIN`` statement to send with the next statement."""
        self._check_open()
        self._held_begin = operation

    async def run_statement(self, operation: str, parameters: Any, *, many: bool) -> _Result:
        """Run one statement (after the ``BEGIN`` held back, if any) and fetch its rows."""
        result = await self.run(_run_statement, operation, parameters, many)
        self._in_transaction = result.in_transaction
        return result

    def cursor(self) -> SQLiteCursor:
        """A new cursor (no hand-off: it only runs statements when asked)."""
        self._check_open()
        return SQLiteCursor(self)

    def _check_open(self) -> sqlite3.Connection:
        if self._connection is None:
            raise ValueError("no active connection")  # what aiosqlite says, and SQLAlchemy maps
        return self._connection

    async def commit(self) -> None:
        """Commit the open transaction (nothing to do when none is open)."""
        await self._end_transaction(self._conn.commit)

    async def rollback(self) -> None:
        """Roll the open transaction back (nothing to do when none is open)."""
        await self._end_transaction(self._conn.rollback)

    async def _end_transaction(self, end: Callable[[], None]) -> None:
        self._held_begin = None
        if self._in_transaction:
            await self._in_thread(end)
            self._in_transaction = False

    async def create_function(self, *args: Any, **kwargs: Any) -> None:
        """Register a Python function with SQLite (SQLAlchemy adds ``regexp``)."""
        await self._in_thread(partial(self._conn.create_function, *args, **kwargs))

    async def close(self) -> None:
        """Close the sqlite3 connection and stop the thread; closing twice is harmless."""
        connection, self._connection = self._connection, None
        if connection is not None:
            try:
                await self._in_thread(connection.close)
            finally:
                self._tx.put(None)

    def stop(self) -> None:
        """Close at once, without waiting (SQLAlchemy's forced termination)."""
        connection, self._connection = self._connection, None
        if connection is not None:
            self._tx.put((None, connection.close))
            self._tx.put(None)

    async def _in_thread(self, function: Callable[[], _T]) -> _T:
        return await self._submit(function)

    def _submit(self, function: Callable[[], _T]) -> asyncio.Future[_T]:
        future: asyncio.Future[_T] = asyncio.get_running_loop().create_future()
        self._tx.put((future, function))
        return future


_Job = tuple["asyncio.Future[Any] | None", Callable[[], Any]]


def _kept(opened: list[sqlite3.Connection], connection: sqlite3.Connection) -> sqlite3.Connection:
    opened.append(connection)
    return connection


def _close_all(connections: list[sqlite3.Connection]) -> None:
    for connection in connections:
        connection.close()


def _call_after(
    begin: str | None, function: Callable[..., _T], connection: sqlite3.Connection, *args: Any
) -> _T:
    if begin is not None:
        connection.execute(begin)
    return function(connection, *args)


def _serve(jobs: SimpleQueue[_Job | None]) -> None:
    """The connection's thread: run each job, hand its outcome back to its event loop."""
    while (job := jobs.get()) is not None:
        future, function = job
        try:
            result = function()
        except BaseException as error:  # every failure goes back to the caller
            _hand_back(future, _set_exception, error)
        else:
            _hand_back(future, _set_result, result)


def _hand_back(
    future: asyncio.Future[Any] | None,
    setter: Callable[[asyncio.Future[Any], Any], None],
    outcome: Any,
) -> None:
    if future is None:
        return
    with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
        future.get_loop().call_soon_threadsafe(setter, future, outcome)


def _set_result(future: asyncio.Future[Any], result: Any) -> None:
    if not future.done():  # the caller may have been cancelled meanwhile
        future.set_result(result)


def _set_exception(future: asyncio.Future[Any], error: BaseException) -> None:
    if not future.done():
        future.set_exception(error)


async def connect(database: str, **kwargs: Any) -> SQLiteConnection:
    """Open ``database`` with sqlite3's ``connect`` arguments, ``check_same_thread`` forced on."""
    options = {**kwargs, "check_same_thread": True}
    return await SQLiteConnection(partial(sqlite3.connect, database, **options)).open()
