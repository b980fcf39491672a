"""Sending a leaderboard: as text, or as a table picture with the text as its caption.

A leaderboard that lists at least :data:`~.stats_render.PICTURE_MIN_ENTRIES`
players is sent as a picture (drawn in a worker thread) whose caption is the
text and whose buttons switch the ranking; a press on such a message replaces
its picture and caption. Shorter leaderboards, and text too long for a caption,
stay plain messages.
"""

from __future__ import annotations

import asyncio
import gettext
import html
import re

from telegram import Message

from ...services.stats.views import LeaderboardView
from ...services.types import Place
from ..delivery.direct import PhotoEditPost, UploadPost
from ..render.i18n import directed
from ..render.stats import (
    StatsButtonSigner,
    leaderboard_keyboard,
    leaderboard_rows,
    leaderboard_title,
    render_leaderboard,
    wants_picture,
)
from .runtime import Runtime

__all__ = ["MAX_CAPTION", "edit_leaderboard_picture", "send_leaderboard"]

MAX_CAPTION = 1024
"""Telegram's limit on a caption, in characters of visible text."""
FILE_NAME = "leaderboard.png"


def _fits_caption(text: str) -> bool:
    return len(html.unescape(re.sub(r"<[^>]+>", "", text))) <= MAX_CAPTION


async def _picture(view: LeaderboardView, tr: gettext.NullTranslations) -> bytes:
    # matplotlib takes about half a second to import: a worker starts without it (a
    # restart is that much quicker) and loads it when it draws its first picture.
    from ..render.charts import leaderboard_picture

    rows = leaderboard_rows(view, tr)
    return await asyncio.to_thread(leaderboard_picture, leaderboard_title(view, tr), rows, tr)


async def send_leaderboard(
    runtime: Runtime,
    place: Place,
    view: LeaderboardView,
    signer: StatsButtonSigner,
    tr: gettext.NullTranslations,
    reply_to: int,
) -> None:
    """Send ``view`` in the topic, as a picture when it lists enough players."""
    text = render_leaderboard(view, tr)
    keyboard = leaderboard_keyboard(view, signer, tr)
    if not wants_picture(view) or not _fits_caption(text):
        runtime.say(place, text, reply_to, keyboard)
        return
    picture = await _picture(view, tr)
    caption = directed(text, tr)
    post = UploadPost(
        "photo",
        place.chat_id,
        place.thread_id,
        picture,
        FILE_NAME,
        caption,
        keyboard,
        reply_to=reply_to,
    )
    runtime.send(post)


async def edit_leaderboard_picture(
    runtime: Runtime,
    place: Place,
    message: Message,
    view: LeaderboardView,
    signer: StatsButtonSigner,
    tr: gettext.NullTranslations,
) -> None:
    """Show ``view`` in ``message``, a leaderboard sent as a picture: new picture and caption.

    A caption too long for Telegram loses rows from its end (the picture shows every row).
    """
    text = directed(render_leaderboard(view, tr), tr)
    lines = text.split("\n")
    while len(lines) > 1 and not _fits_caption("\n".join(lines)):
        lines.pop(-2)
    picture = await _picture(view, tr)
    keyboard = leaderboard_keyboard(view, signer, tr)
    runtime.send(
        PhotoEditPost(
            place.chat_id, message.message_id, picture, FILE_NAME, "\n".join(lines), keyboard
        ),
    )
