"""Reading and changing a chat's settings (changes by chat admins only)."""

from __future__ import annotations

from typing import Any

from ..storage.models import WHOLE_CHAT
from ..storage.uow import UnitOfWork
from .outbox.rows import Notice, NoticeKind, record_notice
from .play.base import Service
from .play.managers import AdminCheck
from .settings import GameSettings, parse_setting
from .types import Actor, Place, Reason, Receipt, Refused


class SettingsService(Service):
    """A chat topic's settings: everyone may look, admins may change."""

    async def show(self, place: Place) -> GameSettings:
        """The settings the next game in the topic will play by (a read-only transaction)."""
        async with self._units(read_only=True) as uow:
            values = await uow.settings.get_effective_values(place.chat_id, place.thread_id)
            return GameSettings.from_values(values)

    async def language(self, place: Place) -> str | None:
        """The language the topic's messages are written in (:func:`written_in`)."""
        async with self._units(read_only=True) as uow:
            return await written_in(uow, place.chat_id, place.thread_id)

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

        The admin check is asked first, before any transaction is opened; a
        refusal changes nothing. A running game keeps the settings it has.
        Settings are the whole chat's: a forum topic plays by its chat's settings.
        ``receipt``: the update that asks, marked processed in the change's
        transaction, so a redelivery of it changes (and announces) nothing.
        ``announce_to``: the message (a command) that a "saved" notice answers,
        written to the outbox with the change.
        """
        if not await is_admin():
            raise Refused(Reason.NOT_ADMIN)
        field, stored_value = parse_setting(name, str(value) if value is not None else "off")
        async with self._change(place, receipt) as uow:
            await self._remember_people(uow, place, actor)
            stored = await uow.settings.values_to_change(place.chat_id, 0)
            stored[field] = stored_value
            await uow.settings.save_values(place.chat_id, 0, stored)
            values = await uow.settings.get_effective_values(place.chat_id, place.thread_id)
            settings = GameSettings.from_values(values)
            if announce_to is not None:
                saved = Notice(NoticeKind.SETTINGS_SAVED, {"settings": settings.to_values()})
                await record_notice(uow, place, saved, reply_to=announce_to)
            return settings


async def adopt_language(uow: UnitOfWork, place: Place, language: str | None) -> str | None:
    """Give the chat ``language`` (when given) unless it already has one (the first opener's).

    Returns the language the chat's messages are now written in, as the settings
    read it (None: the default).
    """
    if language is not None:
        stored = await uow.settings.values_to_change(place.chat_id, 0)
        if "language" not in stored:
            stored["language"] = language
            await uow.settings.save_values(place.chat_id, 0, stored)
    return await chat_language(uow, place)


async def chat_language(uow: UnitOfWork, place: Place) -> str | None:
    """The language the chat's messages are written in, as its settings say (None: the default)."""
    values = await uow.settings.get_effective_values(place.chat_id, place.thread_id)
    return GameSettings.from_values(values).language


async def written_in(uow: UnitOfWork, chat_id: int, thread_id: int = WHOLE_CHAT) -> str | None:
    """The language a chat's messages are written in: the chat's choice, if any.

    A private chat's id is its person's: without a choice it is written in the
    language their Telegram app reported, which outlives a restart (it is stored).
    """
    values = await uow.settings.get_effective_values(chat_id, thread_id)
    chosen = GameSettings.from_values(values).language
    if chosen is not None or chat_id < 0:
        return chosen
    user = await uow.users.get(chat_id)
    return user.language_code if user is not None else None
