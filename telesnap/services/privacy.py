"""Erasing personal data: a person's, a chat's, and those of chats that removed the bot.

An erasure a person asked for commits with the mark of the update that asked, so a
redelivered confirmation erases nothing twice. A person's past games stay, shown as
:data:`FORMER_PLAYER`. A chat is erased a batch of games per transaction, so its other
work never waits long.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..storage.models import WHOLE_CHAT
from ..storage.repositories.privacy import Erased, PrivacyRepository
from .ports import UnitOfWorkFactory
from .settings import GameSettings
from .types import BLANK_NAME, UNKNOWN_NAME, Actor, shown_names

__all__ = ["FORMER_PLAYER", "ChatErasure", "PersonErasure", "PrivacyService"]

logger = logging.getLogger(__name__)

FORMER_PLAYER = "a former player"
"""The name a person who erased their data is stored (and shown) under, in English."""
GAMES_PER_BATCH = 200
"""Games of a chat erased per transaction."""
SHORTEST_RETENTION = timedelta(days=1)
"""The shortest retention a chat may set: chats removed more recently are not looked at."""
CHATS_PER_SWEEP = 100


@dataclass(frozen=True, slots=True)
class PersonErasure:
    """What ``/forgetme`` did (counts of what went); ``done`` False: the person is still seated."""

    done: bool
    games: int = 0
    figures: int = 0
    ratings: int = 0
    messages: int = 0
    updates: int = 0

    @staticmethod
    def of(erased: Erased) -> PersonErasure:
        """The answer for what the repository erased."""
        return PersonErasure(
            True,
            games=erased.get("games", 0),
            figures=erased.get("figures", 0),
            ratings=erased.get("ratings", 0),
            messages=erased.get("messages", 0),
            updates=erased.get("updates", 0),
        )


@dataclass(frozen=True, slots=True)
class ChatErasure:
    """What ``/forgetchat`` did: ``done`` False when a game is open in the chat."""

    done: bool
    games: int = 0
    figures: int = 0


class PrivacyService:
    """Erase a person's or a chat's data; remember and purge the chats that removed the bot."""

    def __init__(self, units: UnitOfWorkFactory) -> None:
        self._units = units
        self._looked_up_to: tuple[datetime, int] | None = None
        """The last removed chat a sweep looked at: the next looks past it, so chats kept
        longer never hide the ones behind them (None: start from the oldest)."""

    async def forget_person(
        self, user_id: int, update_id: int | None = None, asker: Actor | None = None
    ) -> PersonErasure:
        """Erase the person's names, figures and ratings (refused while they are seated).

        ``update_id``, the confirming update, is marked processed with the erasure (its payload
        dropped too), so a redelivery erases nothing more. ``asker``: the person as that update
        names them, which the bot may never have stored (an admin who only stopped a game).
        """
        async with self._units() as uow:
            repository = PrivacyRepository(uow.session)
            if await repository.in_active_game(user_id):
                return PersonErasure(False)
            if update_id is not None and not await uow.updates.mark_update_processed(update_id):
                return PersonErasure(True)
            user = await uow.users.get(user_id)
            names = frozenset(
                name
                for person in (user, asker)
                if person is not None
                for name in (
                    *shown_names(person.first_name, person.last_name, person.username),
                    person.first_name,
                    person.last_name,
                    person.username,
                )
                if name and name not in (BLANK_NAME, UNKNOWN_NAME)  # others' names too
            )
            erased = await repository.forget_user(user_id, FORMER_PLAYER, names)
            await uow.alerts.close_direct(user_id)  # their /notify lists, and the private chat
        logger.info("user %d erased their data: %s", user_id, dict(erased))
        return PersonErasure.of(erased)

    async def forget_chat(self, chat_id: int, update_id: int | None = None) -> ChatErasure:
        """Erase the chat's games, figures and settings (refused while a game is open)."""
        async with self._units() as uow:
            repository = PrivacyRepository(uow.session)
            if await repository.has_active_game(chat_id):
                return ChatErasure(False)
            if update_id is not None and not await uow.updates.mark_update_processed(update_id):
                return ChatErasure(True)
            await uow.alerts.forget_chat(chat_id)
            erased, whole = await repository.forget_chat(chat_id, GAMES_PER_BATCH)
        games, figures = erased.get("games", 0), erased.get("figures", 0)
        while not whole:
            async with self._units() as uow:
                erased, whole = await PrivacyRepository(uow.session).forget_chat(
                    chat_id, GAMES_PER_BATCH
                )
            games += erased.get("games", 0)
            figures += erased.get("figures", 0)
        logger.info("chat %d was erased: %d games, %d figures", chat_id, games, figures)
        return ChatErasure(True, games, figures)

    async def bot_removed(self, chat_id: int, moment: datetime) -> None:
        """Remember when the bot was removed from the chat (its retention runs from then)."""
        async with self._units() as uow:
            await PrivacyRepository(uow.session).mark_removed(chat_id, moment)

    async def bot_added(self, chat_id: int) -> None:
        """The bot is back in the chat: its data is kept again."""
        async with self._units() as uow:
            await PrivacyRepository(uow.session).mark_added(chat_id)

    async def purge_removed_chats(self, now: datetime) -> int:
        """Erase the chats whose retention after removing the bot has passed; how many went.

        One worker purges at a time (on PostgreSQL); each chat a batch per transaction.
        """
        async with self._units() as uow:
            repository = PrivacyRepository(uow.session)
            if not await repository.try_purge_lock():
                return 0
            candidates = await repository.removed_before(
                now - SHORTEST_RETENTION, CHATS_PER_SWEEP, after=self._looked_up_to
            )
            full = len(candidates) == CHATS_PER_SWEEP
            self._looked_up_to = (candidates[-1][1], candidates[-1][0]) if full else None
            due = []
            for chat_id, removed_at in candidates:
                values = await uow.settings.get_values(chat_id, WHOLE_CHAT)
                keep = timedelta(days=GameSettings.from_values(values).keep_after_removal_days)
                if removed_at + keep <= now:
                    due.append(chat_id)
        purged = 0
        for chat_id in due:
            whole = False
            while not whole:
                async with self._units() as uow:
                    repository = PrivacyRepository(uow.session)
                    if not await repository.try_purge_lock():
                        return purged
                    _, whole = await repository.forget_chat(chat_id, GAMES_PER_BATCH)
            purged += 1
            logger.info("chat %d: erased, its retention after the bot's removal passed", chat_id)
        return purged
