"""Each chat's sender: the one path every message of the bot takes to Telegram.

The durable outbox rows are the queue. One task per chat, under the chat's lease (one worker
at a time sends a chat's rows), sends its line head by head in the chat's pace and marks the
rows sent only once Telegram has taken them. What no change produces is posted directly in the
same task and pace, and is lost if the process dies before it is out; a replaced board's
buttons come off next, ahead of what waits. Failures stay in their chat (:mod:`.failures`);
the look-out (:mod:`.lookout`) takes over rows nobody sends.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from telegram import Bot
from telegram.error import BadRequest, ChatMigrated, Forbidden

from ...coordination import Coordination
from ...services.chat_settings import ChatLanguages
from ...services.outbox.rows import Entry, NoticeEntry, next_head
from ...services.outbox.service import OutboxService
from ...support.bounded import BoundedDict
from ...support.retry import short_cause
from ..render.i18n import translator
from .direct import KeyboardRemovalPost, Post
from .failures import SendFailures, is_gone, is_refused_for_good, is_unchanged
from .pace import Pacer
from .show import HeadNotShownError, HeadShow

logger = logging.getLogger(__name__)

IDLE_LOOKS = 2
"""With several workers, a chat's lease is given up at the second look that finds it idle."""
CLOSED_KEPT = 10_000
"""How many chats that removed the bot are remembered (so nothing is sent there)."""
ANSWER_STALE_S = 60.0
"""An answer that waited this long behind a game's boards is dropped (and logged): by then
nobody waits for it, and a crowd's answers cannot pile up."""


class _RowsTurn:
    """The place of a chat's outbox rows in its queue (at most one waits at a time)."""


ROWS = _RowsTurn()


@dataclass(eq=False)
class _Chat:
    chat_id: int
    queue: deque[Post | _RowsTurn] = field(default_factory=deque)
    rows_queued: bool = False
    task: asyncio.Task[None] | None = None
    leased: bool = False
    idle_rounds: int = 0
    """Looks that found it leased with nothing to send (several workers: see ``_let_go``)."""
    answers_since: dict[int, float] = field(default_factory=dict)
    """When each answer waiting in ``queue`` was posted (by the post's ``id``)."""
    failures: SendFailures = field(init=False)

    def __post_init__(self) -> None:
        self.failures = SendFailures(self.chat_id)


class Senders:
    """The senders of every chat this process sends to (see the module)."""

    def __init__(
        self,
        bot: Bot,
        outbox: OutboxService,
        coordination: Coordination,
        pacer: Pacer,
        languages: ChatLanguages,
        show: HeadShow,
        *,
        on_forbidden: Callable[[int], None] = lambda chat_id: None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        """``sleep`` waits out a retry's delay (tests pass one that returns at once)."""
        self._sleep = sleep
        self._bot = bot
        self._outbox = outbox
        self._coordination = coordination
        self._pacer = pacer
        self._languages = languages
        self._show = show
        self._on_forbidden = on_forbidden
        self._chats: dict[int, _Chat] = {}
        self._closed: BoundedDict[int, None] = BoundedDict(CLOSED_KEPT)
        self._closing = False
        outbox.on_rows(self.wake)
        outbox.on_shown_twice(
            lambda chat_id, copy: self._post_next(KeyboardRemovalPost(chat_id, copy))
        )

    # -- what comes in --------------------------------------------------------------------

    def wake(self, chat_id: int) -> None:
        """The chat has rows to send (new, or found waiting); a closed chat's are set aside."""
        if self._closing:
            return
        chat = self._chat(chat_id)
        chat.idle_rounds = 0
        if not chat.rows_queued:
            chat.rows_queued = True
            chat.queue.append(ROWS)
        self._start(chat)

    def rows_written(self, chat_id: int) -> None:
        """A worker committed rows for the chat: only the worker that holds the chat sends them.

        The worker that wrote them was woken by its own commit.
        """
        chat = self._chats.get(chat_id)
        if chat is not None and chat.leased:
            self.wake(chat_id)

    def post(self, post: Post) -> None:
        """Say something directly (see the module); a waiting post with its key is replaced."""
        if self._closing or post.chat_id in self._closed:
            return
        chat = self._chat(post.chat_id)
        since = time.monotonic()
        if post.key is not None:
            for index, waiting in enumerate(chat.queue):
                if isinstance(waiting, _RowsTurn) or waiting.key != post.key:
                    continue
                chat.queue[index] = post
                chat.answers_since[id(post)] = chat.answers_since.pop(id(waiting), since)
                return
        chat.queue.append(post)
        chat.answers_since[id(post)] = since
        self._start(chat)

    def _post_next(self, post: Post) -> None:
        if self._closing or post.chat_id in self._closed:
            return
        chat = self._chat(post.chat_id)
        chat.queue.appendleft(post)
        self._start(chat)

    def _chat(self, chat_id: int) -> _Chat:
        chat = self._chats.get(chat_id)
        if chat is None:
            chat = self._chats[chat_id] = _Chat(chat_id)
        return chat

    def _start(self, chat: _Chat) -> None:
        if chat.task is None:
            chat.task = asyncio.create_task(self._run(chat), name=f"sender-{chat.chat_id}")

    # -- a chat's removal -----------------------------------------------------------------

    def close_chat(self, chat_id: int) -> bool:
        """Send nothing more to the chat (it removed the bot); whether it was open until now."""
        if chat_id in self._closed:
            return False
        self._closed[chat_id] = None
        chat = self._chats.get(chat_id)
        if chat is not None:
            chat.queue.clear()
            chat.answers_since.clear()
            chat.rows_queued = False
        return True

    def open_chat(self, chat_id: int) -> None:
        """Messages may go to the chat again."""
        self._closed.pop(chat_id, None)

    def is_closed(self, chat_id: int) -> bool:
        """Whether nothing is sent to the chat (it removed the bot)."""
        return chat_id in self._closed

    # -- the sender of one chat -----------------------------------------------------------

    async def _run(self, chat: _Chat) -> None:
        try:
            while chat.queue and not self._closing:
                item = chat.queue.popleft()
                if isinstance(item, _RowsTurn):
                    chat.rows_queued = False
                    if await self._rows_turn_or_wait(chat) and not chat.rows_queued:
                        chat.rows_queued = True
                        chat.queue.append(ROWS)
                else:
                    since = chat.answers_since.pop(id(item), None)
                    waited = 0.0 if since is None else time.monotonic() - since
                    if waited > ANSWER_STALE_S:
                        what = _name(item)
                        logger.info(
                            "chat %s: %s waited %.0f s; dropped", chat.chat_id, what, waited
                        )
                        continue
                    await self._direct(chat, item)
                    if since is not None and chat.rows_queued and chat.queue[0] is not ROWS:
                        # After an answer the boards go next: a crowd of answers never holds a
                        # game back, and a game that never pauses lets one out after each board.
                        chat.queue.remove(ROWS)
                        chat.queue.appendleft(ROWS)
        finally:
            chat.task = None
            if not chat.queue and not chat.leased and self._chats.get(chat.chat_id) is chat:
                del self._chats[chat.chat_id]

    async def _rows_turn_or_wait(self, chat: _Chat) -> bool:
        """A rows turn; one failing before its send waits a backoff (the outbox keeps its rows)."""
        try:
            return await self._rows_turn(chat)
        except Exception:
            delay = chat.failures.backoff.next()
            logger.exception(
                "chat %s: taking its unsent rows failed; trying again in %.1f s",
                chat.chat_id,
                delay,
            )
            await self._sleep(delay)
            return True

    async def _rows_turn(self, chat: _Chat) -> bool:
        """Send the head of the chat's line; whether more may wait."""
        chat_id = chat.chat_id
        if chat_id in self._closed:
            await self._outbox.chat_gone(chat_id)  # nothing goes there any more
            return False
        if chat.leased and not self._coordination.holds_chat(chat_id):
            chat.leased = False  # lost with the coordination connection: take it again
        if not chat.leased:
            if not await self._coordination.try_chat(chat_id):
                return False  # another worker sends the chat's rows (and sees these)
            chat.leased = True
            self._outbox.taken(chat_id)
        line = await self._outbox.line(chat_id)
        head = next_head(line.entries)
        if not head:
            return await self._let_go(chat)
        language = await self._languages.of(chat_id)  # before the slot: a failed read takes none
        waited = await self._pacer.wait_for_slot(chat_id)
        try:  # the slot is given back whatever happens
            if waited and chat_id in self._closed:
                return True  # the bot was removed while this waited: the next turn sets rows aside
            if waited:
                line = await self._outbox.line(chat_id)  # time passed: take what came meanwhile
                head = next_head(line.entries)
            if head:
                showing = await self._show.show(head, line, translator(language or asker(head)))
        except HeadNotShownError as failed:
            return await self._failed_head(chat, failed.entry_ids, head[0].game_id, failed.error)
        finally:
            await self._pacer.sent(chat_id)
        if not head:
            return await self._let_go(chat)
        chat.failures.succeeded(head[0].id)
        await self._outbox.sent(showing.shown)
        if showing.bare is not None:
            self._post_next(KeyboardRemovalPost(chat_id, showing.bare))
        if len(line.entries) > len(showing.shown.entry_ids):
            return True
        return await self._let_go(chat)

    async def _failed_head(
        self, chat: _Chat, ids: list[int], game_id: int | None, error: Exception
    ) -> bool:
        """What a failed send of rows ``ids`` (of ``game_id``) means; whether the chat goes on."""
        chat_id = chat.chat_id
        if is_refused_for_good(error) or chat.failures.own_fault_is_last(error, ids[0]):
            logger.error("chat %s: rows %s (game %s) set aside: %r", chat_id, ids, game_id, error)
            await self._outbox.failed(chat_id, ids, repr(error), game_id=game_id)
            return True
        return await self._retry(chat, error, f"rows {ids}")

    async def _direct(self, chat: _Chat, post: Post) -> None:
        await self._pacer.wait_for_slot(chat.chat_id)
        if isinstance(post, KeyboardRemovalPost):  # noted first: a start does not take them again
            await self._outbox.bared(chat.chat_id, post.message_id)
        try:
            try:
                await post.send(self._bot)
            finally:
                await self._pacer.sent(chat.chat_id)
        except BadRequest as error:
            if is_gone(error):  # deleted in the chat, or before a restart (the sandbox's)
                what = _name(post)
                logger.info("chat %s: %s: the message is gone (%s)", chat.chat_id, what, error)
            elif not is_unchanged(error):
                logger.error("chat %s: Telegram refused %s: %s", chat.chat_id, _name(post), error)
            return
        except Exception as error:
            if isinstance(post, KeyboardRemovalPost):  # a kill while it waits: a start does it
                await self._outbox.not_bared(chat.chat_id, post.message_id)
            if chat.failures.own_fault_is_last(error, id(post)):
                logger.exception("chat %s: sending %s failed; dropped", chat.chat_id, _name(post))
                return
            if await self._retry(chat, error, _name(post)):
                chat.queue.appendleft(post)
            return
        chat.failures.succeeded(id(post))

    async def _retry(self, chat: _Chat, error: Exception, what: str) -> bool:
        """Wait before trying ``what`` again; False: the chat is gone (nothing to try)."""
        if isinstance(error, ChatMigrated):  # Telegram will not take this chat id again
            logger.warning(
                "chat %s became supergroup %s: its games here end; new ones are played there",
                chat.chat_id,
                error.new_chat_id,
            )
            await self._gone(chat)
            return False
        if isinstance(error, Forbidden):
            logger.warning("chat %s: the bot cannot post here (%s)", chat.chat_id, error)
            await self._gone(chat)
            return False
        await chat.failures.wait_to_retry(error, what, self._sleep)
        return True

    async def _gone(self, chat: _Chat) -> None:
        self.close_chat(chat.chat_id)
        try:
            await self._outbox.chat_gone(chat.chat_id)
        except Exception:
            logger.exception(
                "chat %s: could not set the rows of a removed chat aside", chat.chat_id
            )
        try:
            self._on_forbidden(chat.chat_id)
        except Exception:
            logger.exception("chat %s: handling the bot's removal failed", chat.chat_id)

    async def _let_go(self, chat: _Chat) -> bool:
        """The chat's line is empty: give its lease up; whether rows came meanwhile.

        With several workers it is kept until :meth:`release_idle`: the next row comes soon, and a
        row another worker commits meanwhile wakes this one (:meth:`rows_written`).
        """
        if not self._coordination.shared:
            chat.leased = False
            await self._coordination.release_chat(chat.chat_id)
        return False

    async def release_idle(self) -> None:
        """Give up the leases of the chats idle at the last look and again at this one.

        Then look again: a row another worker committed while this one held the chat was left to it.
        """
        for chat in list(self._chats.values()):
            if not chat.leased or chat.task is not None or chat.queue:
                continue
            chat.idle_rounds += 1
            if chat.idle_rounds < IDLE_LOOKS:
                continue
            chat.leased = False
            await self._coordination.release_chat(chat.chat_id)
            if await self._outbox.has_pending(chat.chat_id):
                self.wake(chat.chat_id)
            elif self._chats.get(chat.chat_id) is chat and not chat.queue:
                del self._chats[chat.chat_id]

    # -- what the look-out and the stop ask ------------------------------------------------

    def is_sending(self, chat_id: int) -> bool:
        """Whether a sender here has the chat's rows in hand (running, or queued)."""
        chat = self._chats.get(chat_id)
        return chat is not None and (chat.task is not None or chat.rows_queued)

    @property
    def busy_chats(self) -> int:
        """How many chats have a sender now (with something to send)."""
        return sum(1 for chat in self._chats.values() if chat.task is not None or chat.queue)

    async def flush(self, timeout_s: float = 5.0) -> bool:
        """Wait (``timeout_s`` at most) until every chat has sent what it holds; whether it did."""
        try:
            async with asyncio.timeout(timeout_s):
                while tasks := [chat.task for chat in self._chats.values() if chat.task]:
                    await asyncio.wait(tasks)
        except TimeoutError:
            return False
        return True

    async def close(self) -> None:
        """Send what is queued (briefly), then stop every chat's sender and let the chats go."""
        if not await self.flush():
            logger.warning(
                "stopping with messages unsent; the rows among them are sent at the next"
                " start, or by another worker"
            )
        self._closing = True
        tasks = [chat.task for chat in self._chats.values() if chat.task]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for chat in list(self._chats.values()):
            if chat.leased:
                chat.leased = False
                try:
                    await self._coordination.release_chat(chat.chat_id)
                except Exception:
                    logger.exception("chat %s: could not give its lease up", chat.chat_id)
        self._chats.clear()
        try:  # the buttons taken off: a start does not take them again
            await self._outbox.write()
        except Exception as error:
            logger.warning("could not note the buttons taken off (%s)", short_cause(error))


def _name(post: Post) -> str:
    """A direct post named in a log line: its kind."""
    return type(post).__name__


def asker(head: Sequence[Entry]) -> str | None:
    """The language of whom a notice answers: it is written in theirs while the chat has none."""
    language = head[0].notice.args.get("language") if isinstance(head[0], NoticeEntry) else None
    return language if isinstance(language, str) else None
