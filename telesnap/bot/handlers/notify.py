"""``/notify``: a private message when a lobby opens in a chat where one plays.

Telegram lets a bot write first only to someone who started it, so a subscriber who has not is
shown a button to the private chat; their alerts start when they press Start there.
"""

from __future__ import annotations

import gettext
from collections.abc import Sequence

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message

from ...services.notify import AlertState, NotifyService
from ...services.types import Place
from ..render.boards import name
from ..render.i18n import isolate, listed
from ..render.names import shorten
from .actions import Request
from .context import command_arguments
from .runtime import Runtime

START_PAYLOAD = "notify"
"""The ``/start`` parameter of the button that opens the private chat (``t.me/bot?start=``)."""


def lobby_link(message: Message) -> str | None:
    """A link to ``message`` (the ``/newgame`` that opened a lobby), where the chat has one.

    A private supergroup's link opens for its members only; a basic group has no links.
    """
    chat = message.chat
    digits = str(chat.id)
    if chat.username:
        link = f"https://t.me/{chat.username}/{message.message_id}"
    elif digits.startswith("-100"):
        link = f"https://t.me/c/{digits[4:]}/{message.message_id}"
    else:
        return None
    thread = message.message_thread_id if message.is_topic_message else None
    return f"{link}?thread={thread}" if thread else link


async def notify_command(request: Request) -> None:
    """``/notify`` (or ``/notify on``), ``/notify off``: the sender's alerts for this chat."""
    runtime, place, actor = request.runtime, request.place, request.actor
    notify = _service(runtime)
    tr, reply = request.translations(), request.reply
    words = [word.lower() for word in command_arguments(request.message)]
    if place.is_private:
        reply(await private_start_line(request) or private_alerts_text((), tr))
        return
    if words not in ([], ["on"], ["off"]):
        reply(
            tr.gettext("/notify: a private message when a game opens here; /notify off stops them.")
        )
        return
    if words == ["off"]:
        state = await notify.unsubscribe(place, actor)
    else:
        state = await notify.subscribe(place, actor)
    button = None
    if state.subscribed and not state.reachable:
        button = start_button(runtime.bot.username, tr)
    reply(alert_text(state, place, tr), button)


def alert_text(state: AlertState, place: Place, tr: gettext.NullTranslations) -> str:
    """Where the sender stands with the chat's alerts, after ``/notify`` or ``/notify off``."""
    chat = _chat_title(place.title, tr)
    if not state.subscribed:
        if not state.changed:
            return tr.gettext("🔕 You were not on the list for {chat}: nothing changes.").format(
                chat=chat
            )
        return tr.gettext("🔕 Off: no more private messages when a game opens in {chat}.").format(
            chat=chat
        )
    if state.changed:
        on = tr.gettext("🔔 On: I will write to you privately when a game opens in {chat}.")
    else:
        on = tr.gettext(
            "🔔 You are on the list already: I write to you when a game opens in {chat}."
        )
    lines = [on.format(chat=chat), tr.gettext("Not for the games you open. /notify off stops it.")]
    if not state.reachable:
        lines.append(
            tr.gettext(
                "⚠️ I cannot write to you yet: Telegram lets a bot write only to people who "
                "started it. Open a private chat with me and press Start."
            )
        )
    return "\n".join(lines)


def start_button(username: str, tr: gettext.NullTranslations) -> InlineKeyboardMarkup:
    """The button that opens the private chat with the bot (and sends it ``/start``)."""
    url = f"https://t.me/{username}?start={START_PAYLOAD}"
    return InlineKeyboardMarkup(
        [[InlineKeyboardButton(tr.gettext("Open a private chat with me"), url=url)]]
    )


def private_alerts_text(chats: Sequence[str | None], tr: gettext.NullTranslations) -> str:
    """What the private chat says about the person's alerts."""
    if not chats:
        return tr.gettext(
            "Send /notify in a group where you play, and I will write to you here when a "
            "game opens there."
        )
    titles = listed((_chat_title(title, tr) for title in chats), tr)
    return tr.gettext(
        "🔔 I write to you here when a game opens in: {chats}. Send /notify off in a chat to stop."
    ).format(chats=titles)


async def private_start_line(request: Request) -> str | None:
    """``/start`` in the private chat: the bot may write here now; what it will write about."""
    runtime = request.runtime
    chats = await _service(runtime).private_chat_opened(request.actor.user_id)
    runtime.senders.open_chat(request.place.chat_id)
    if not chats:
        return None
    return private_alerts_text(chats, request.translations())


def _chat_title(title: str | None, tr: gettext.NullTranslations) -> str:
    return isolate(f"<b>{name(shorten(title or '?', 64))}</b>", tr)


def _service(runtime: Runtime) -> NotifyService:
    if runtime.notify is None:
        raise RuntimeError("the bot was built without its lobby alerts")
    return runtime.notify
