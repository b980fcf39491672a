"""A press whose change meets a database outage is run again, applied once, and answered.

The real dispatcher and inbox run behind a stand-in for python-telegram-bot's
dispatch that, like it, hands a handler's exception to the real error handler.
The handler's change runs in a real unit of work; the fault is injected into
the database session (the statement fails as a dropped connection makes it fail).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import event, select
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine
from telegram import Update

from telesnap.bot.handlers.errors import on_error
from telesnap.bot.handlers.runtime import RUNTIME_KEY
from telesnap.storage.database import session_factory
from telesnap.storage.models import InboxUpdate
from telesnap.storage.uow import UnitsOfWork

from .inbox_helpers import SIGNER, Counter, Worker, snap_press
from .runtimes import wired_runtime
from .test_error_handler import AnsweringBot

PRESS_FAILED = "⚠️ Something went wrong on my side. Please try again."


class FailingStatements:
    """Fails the next ``count`` statements that touch the users table."""

    def __init__(self, engine: AsyncEngine, count: int) -> None:
        self.left = count
        self._engine = engine.sync_engine
        event.listen(self._engine, "before_cursor_execute", self._check)

    def _check(self, _conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if self.left > 0 and "users" in statement:
            self.left -= 1
            raise OperationalError("(injected)", None, ConnectionError("connection reset"))

    def remove(self) -> None:
        event.remove(self._engine, "before_cursor_execute", self._check)


@dataclass
class Context:
    bot: AnsweringBot
    error: Exception
    bot_data: dict[str, Any] = field(default_factory=dict)


async def test_a_press_whose_change_meets_a_database_outage_is_applied_and_answered(
    engine: AsyncEngine,
) -> None:
    bot = AnsweringBot()
    units = UnitsOfWork(session_factory(engine))
    done = Counter()
    runtime = wired_runtime(bot=bot, signer=SIGNER)

    async def change(update: Update) -> None:
        async with units() as uow:
            assert await uow.updates.mark_update_processed(update.update_id)
            await uow.users.upsert(7, "Ada")
        await bot.answer_callback_query(f"q{update.update_id}", "You joined the game.")

    async def dispatch(update: Update) -> None:
        """Like python-telegram-bot: a handler's exception goes to the error handler."""
        try:
            await change(update)
        except Exception as error:
            await on_error(update, Context(bot, error, {RUNTIME_KEY: runtime}))  # type: ignore[arg-type]
        done.add()

    worker = Worker(engine, dispatch)
    runtime.book = worker.book
    outage = FailingStatements(engine, count=2)
    await worker.coordination.start(worker.dispatcher.wake)
    try:
        await worker.dispatcher.start()
        press = snap_press(41, -5)
        await worker.receive(press)
        await done.reached(3)
        await worker.dispatcher.drain()
    finally:
        outage.remove()
        await worker.coordination.close()
        await runtime.close()
    async with units(read_only=True) as uow:
        user = await uow.users.get(7)
        processed = await uow.session.scalar(
            select(InboxUpdate.processed_at).where(InboxUpdate.update_id == 41)
        )
    assert user is not None, "the change was applied once the database was back"
    assert processed is not None
    assert bot.answers == [("q41", "You joined the game.")], "answered once, with its result"


async def test_a_press_still_failing_on_its_last_attempt_is_answered_with_the_failure(
    engine: AsyncEngine,
) -> None:
    bot = AnsweringBot()
    runtime = wired_runtime(bot=bot, signer=SIGNER)
    done = Counter()

    async def dispatch(update: Update) -> None:
        error = OperationalError("(injected)", None, ConnectionError("refused"))
        update.callback_query.set_bot(bot)  # type: ignore[union-attr, arg-type]
        await on_error(update, Context(bot, error, {RUNTIME_KEY: runtime}))  # type: ignore[arg-type]
        done.add()

    worker = Worker(engine, dispatch)
    runtime.book = worker.book
    worker.book.attempting(51, last=False)
    assert worker.book.retry_later(51), "not the last attempt: run again, not answered"
    assert worker.book.take_retry(51)
    worker.book.attempting(51, last=True)
    await dispatch(snap_press(51, -5))
    assert bot.answers == [("q51", PRESS_FAILED)], "the last attempt answers the failure"
    await runtime.close()
