"""Reading and changing a chat's settings (changes by chat admins only), and its language.

A private chat has no games: its person sets its language (for the bot's messages there and
their ``/notify`` alerts), and nothing else.

Every message the bot renders asks for its chat's language, so recent chats' languages are
kept (:class:`ChatLanguages`), updated the moment a change commits, before anything it
wrote is shown.
"""

from __future__ import annotations

from typing import Any

from ..storage.models import WHOLE_CHAT
from ..storage.uow import UnitOfWork
from ..support.bounded import BoundedDict
from .outbox.rows import Notice, NoticeKind, record_notice
from .play.base import Service
from .play.managers import AdminCheck
from .play.store import GameStore
from .ports import UnitOfWorkFactory
from .settings import GameSettings, parse_setting
from .types import Actor, Place, Reason, Receipt, Refused

PRIVATE_CHAT_SETTINGS = ("language",)
"""The settings a private chat takes (by their public names): no game is played there."""

LANGUAGES_KEPT = 10_000
"""How many chats' languages are kept; the least recently used is read again."""


class ChatLanguages:
    """The language each chat is written in (None: the default), as its settings say."""

    def __init__(self, units: UnitOfWorkFactory, *, kept: int = LANGUAGES_KEPT) -> None:
        self._units = units
        self._known: BoundedDict[int, str | None] = BoundedDict(kept)

    def known(self, chat_id: int) -> tuple[bool, str | None]:
        """(known, language): the chat's language if it is kept here."""
        if chat_id in self._known:
            self._known.touch(chat_id)
            return True, self._known[chat_id]
        return False, None

    async def of(self, chat_id: int, app_language: str | None = None) -> str | None:
        """The chat's language: its choice, read once and kept.

        A private chat that chose none is written in its person's app language: ``app_language``
        (as their update reports it now), else as last stored. That one is never kept here: it
        changes with the app.
        """
        known, chosen = self.known(chat_id)
        if not known:
            async with self._units(read_only=True) as uow:
                chosen = await chosen_language(uow, chat_id)
            self._known[chat_id] = chosen
        if chosen is not None or chat_id < 0 or app_language is not None:
            return chosen or app_language
        async with self._units(read_only=True) as uow:
            return await stored_app_language(uow, chat_id)

    def chosen(self, uow: UnitOfWork, chat_id: int, language: str | None) -> None:
        """The change in ``uow`` gives the chat ``language``: kept the moment it commits."""
        uow.after_commit(lambda: self._known.__setitem__(chat_id, language))

    def forget(self, chat_id: int) -> None:
        """The chat's settings were erased: its language is read again."""
        self._known.pop(chat_id, None)

    def __len__(self) -> int:
        """How many chats' languages are kept now."""
        return len(self._known)


class SettingsService(Service):
    """A chat topic's settings: everyone may look, admins may change."""

    def __init__(
        self, units: UnitOfWorkFactory, store: GameStore, languages: ChatLanguages | None = None
    ) -> None:
        """Change settings through ``units``; ``languages`` hears of each language chosen."""
        super().__init__(units, store)
        self.languages = languages if languages is not None else ChatLanguages(units)

    async def show(self, place: Place) -> GameSettings:
        """The settings the next game in the topic will play by (a read-only transaction)."""
        async with self._units(read_only=True) as uow:
            return await topic_settings(uow, place)

    async def change(
        self,
        place: Place,
        actor: Actor,
        name: str,
        value: Any,
        *,
        is_admin: AdminCheck,
        receipt: Receipt | None = None,
        announce_to: int | None = None,
    ) -> GameSettings:
        """Set one setting by its public name (a chat admin only); return the settings now.

        In a private chat, only :data:`PRIVATE_CHAT_SETTINGS`, by its person (it is theirs).
        The admin check is asked before any transaction opens. Settings are the whole chat's; a
        running game keeps its own. ``receipt`` is marked processed in the change's transaction, so
        a redelivery changes (and announces) nothing; the "saved" notice answering ``announce_to``
        is written to the outbox with the change.
        """
        if place.is_private:
            if name.strip().lower() not in PRIVATE_CHAT_SETTINGS:
                raise Refused(Reason.PRIVATE_CHAT_SETTING, {"name": name})
        elif not await is_admin():
            raise Refused(Reason.NOT_ADMIN)
        field, stored_value = parse_setting(name, str(value) if value is not None else "off")
        async with self._change(place, receipt) as uow:
            await self._remember_people(uow, place, actor)
            stored = await uow.settings.values_to_change(place.chat_id, 0)
            stored[field] = stored_value
            await uow.settings.save_values(place.chat_id, 0, stored)
            settings = await topic_settings(uow, place)
            if place.chat_id < 0 or settings.language is not None:
                self.languages.chosen(uow, place.chat_id, settings.language)
            if announce_to is not None:
                values = {
                    "settings": settings.to_values(),
                    "language": actor.language_code,
                    "private": place.is_private,
                }
                saved = Notice(NoticeKind.SETTINGS_SAVED, values)
                await record_notice(uow, place, saved, reply_to=announce_to)
            return settings


async def adopt_language(uow: UnitOfWork, place: Place, language: str | None) -> str | None:
    """Give the chat ``language`` unless it has one (the first opener's); return its language."""
    if language is not None:
        stored = await uow.settings.values_to_change(place.chat_id, 0)
        if "language" not in stored:
            stored["language"] = language
            await uow.settings.save_values(place.chat_id, 0, stored)
    return await chat_language(uow, place)


async def chat_language(uow: UnitOfWork, place: Place) -> str | None:
    """The language the chat's messages are written in, as its settings say (None: the default)."""
    return (await topic_settings(uow, place)).language


async def topic_settings(uow: UnitOfWork, place: Place) -> GameSettings:
    """The settings the topic's next game plays by (a forum topic plays by its chat's)."""
    return GameSettings.from_values(
        await uow.settings.get_effective_values(place.chat_id, place.thread_id)
    )


async def written_in(uow: UnitOfWork, chat_id: int) -> str | None:
    """The language a chat's messages are written in: the chat's choice, if any.

    Else a private chat (its id is its person's) uses the language their app reported, stored
    so it outlives a restart.
    """
    chosen = await chosen_language(uow, chat_id)
    if chosen is not None or chat_id < 0:
        return chosen
    return await stored_app_language(uow, chat_id)


async def chosen_language(uow: UnitOfWork, chat_id: int) -> str | None:
    """The language the chat chose with ``/settings`` (None: none yet)."""
    values = await uow.settings.get_effective_values(chat_id, WHOLE_CHAT)
    return GameSettings.from_values(values).language


async def stored_app_language(uow: UnitOfWork, user_id: int) -> str | None:
    """The language a person's app reported when the bot last stored them."""
    user = await uow.users.get(user_id)
    return user.language_code if user is not None else None
