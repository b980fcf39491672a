"""``/notify``: a private message to the people who asked, when a lobby opens in their chat.

Telegram lets a bot write first only to someone who started it privately, so a
subscription waits until then. The message is an outbox notice written in the
transaction that opens the lobby, so a crash loses none, and it goes out through the
private chat's own sender, within the flood limits.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ..storage.uow import UnitOfWork
from .chat_settings import written_in
from .outbox.rows import Notice, NoticeKind, record_notice
from .ports import UnitOfWorkFactory
from .types import Actor, Place, Reason, Refused, display_name

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class AlertState:
    """Where a person stands with a chat's lobby alerts."""

    subscribed: bool
    changed: bool
    """Whether this request changed it (False: it was so already)."""
    reachable: bool
    """Whether the bot may write to them privately (they started it)."""


class NotifyService:
    """Subscriptions to a chat's new lobbies, and who the bot may write to privately."""

    def __init__(self, units: UnitOfWorkFactory) -> None:
        self._units = units

    async def subscribe(self, place: Place, actor: Actor) -> AlertState:
        """Ask for a private message whenever a lobby opens in the chat of ``place``."""
        if place.is_private:
            raise Refused(Reason.PRIVATE_CHAT)
        async with self._units() as uow:
            await uow.chats.upsert(place.chat_id, place.chat_type, place.title, place.is_forum)
            await uow.users.upsert(
                actor.user_id,
                actor.first_name,
                actor.last_name,
                actor.username,
                actor.language_code,
            )
            changed = await uow.alerts.subscribe(place.chat_id, actor.user_id)
            reachable = await uow.alerts.has_direct(actor.user_id)
        return AlertState(True, changed, reachable)

    async def unsubscribe(self, place: Place, actor: Actor) -> AlertState:
        """Stop the private messages about the chat's lobbies."""
        if place.is_private:
            raise Refused(Reason.PRIVATE_CHAT)
        async with self._units() as uow:
            changed = await uow.alerts.unsubscribe(place.chat_id, actor.user_id)
            reachable = await uow.alerts.has_direct(actor.user_id)
        return AlertState(False, changed, reachable)

    async def private_chat_opened(self, user_id: int) -> tuple[str | None, ...]:
        """The person started the bot privately; the titles of the chats they hear from."""
        async with self._units() as uow:
            if await uow.alerts.open_direct(user_id):
                logger.info("user %s opened a private chat with the bot", user_id)
            return tuple(await uow.alerts.chats_of(user_id))

    async def private_chat_closed(self, user_id: int) -> int:
        """The person blocked the bot: nothing more is sent to them; how many alerts went."""
        async with self._units() as uow:
            dropped = await uow.alerts.close_direct(user_id)
        logger.info(
            "user %s blocked the bot: dropped from the lobby alerts of %d chat(s)", user_id, dropped
        )
        return dropped


async def alert_subscribers(
    uow: UnitOfWork, place: Place, opener: Actor, link: str | None
) -> tuple[tuple[int, str | None], ...]:
    """Write a private notice to each subscriber of the chat (not the opener).

    Returns who was told, with their language: their private chat's /settings, else their
    app's. ``link``: where the lobby can be reached (None: the chat has none).
    """
    notice = Notice(
        NoticeKind.LOBBY_OPENED,
        {
            "chat": place.title,
            "user_id": opener.user_id,
            "name": display_name(opener.first_name, opener.last_name, opener.username),
            "link": link,
        },
    )
    told = []
    for user_id in await uow.alerts.recipients(place.chat_id):
        if user_id == opener.user_id:
            continue
        await record_notice(uow, Place(user_id, chat_type="private"), notice)
        told.append((user_id, await written_in(uow, user_id)))
    return tuple(told)
