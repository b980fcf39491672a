"""/stats, /leaderboard, /history and /replay, and the stats buttons.

Register them before the game's generic handlers, whose catch-all would refuse the stats
buttons. Everything is sent through the runtime, so flood limits hold.
"""

from __future__ import annotations

import asyncio
import gettext
import html
from dataclasses import dataclass, replace
from functools import partial
from html.parser import HTMLParser
from typing import Any

from telegram import InlineKeyboardMarkup, Message, Update
from telegram.ext import Application, CallbackQueryHandler, CommandHandler

from ...services.stats.service import StatsService
from ...services.stats.views import GameLine, LeaderboardView
from ...services.types import Place, Refused
from ..delivery.direct import PhotoEditPost
from ..render.boards import plain_text, shown_length
from ..render.callbacks import carries_button
from ..render.history import history_keyboard, render_game_line, render_history
from ..render.i18n import directed, language_of, translator
from ..render.names import TYPED_WORD_LIMIT, shorten, utf16_length
from ..render.stats import (
    STATS_CALLBACK_PATTERN,
    StatsButtonSigner,
    leaderboard_keyboard,
    leaderboard_rows,
    leaderboard_title,
    render_leaderboard,
    render_player_stats,
    wants_picture,
)
from .commands import posted_as_a_chat, refuse
from .context import command_arguments, command_name, place_of_update, replied_to
from .runtime import Answerer, Context, Runtime, finishing, refuse_press, runtime_of

STATS_COMMANDS = ("stats", "leaderboard", "history", "replay")
KEPT_PER_GROUP = ("leaderboard", "history", "replay")
"""What a private chat answers by pointing to the groups: it holds no game of its own."""
MAX_CAPTION = 1024
"""Telegram's limit on a caption, in characters of visible text."""
LEADERBOARD_FILE_NAME = "leaderboard.png"
MAX_GAME_ID_DIGITS = 19
"""A game number has at most as many digits as the database's largest integer."""


@dataclass(eq=False)
class StatsBot:
    """What the stats handlers share: the service and the buttons' signer."""

    service: StatsService
    signer: StatsButtonSigner

    @classmethod
    def for_token(cls, service: StatsService, token: str) -> StatsBot:
        """With a button signer keyed by the bot token."""
        return cls(service, StatsButtonSigner.for_token(token))


def register_stats_handlers(application: Application[Any, Any, Any, Any, Any, Any]) -> None:
    """Add the stats commands and buttons (before the generic handlers)."""
    application.add_handler(CommandHandler(list(STATS_COMMANDS), on_stats_command))
    application.add_handler(CallbackQueryHandler(on_stats_button, pattern=STATS_CALLBACK_PATTERN))


@finishing
async def on_stats_command(update: Update, context: Context) -> None:
    """/stats, /leaderboard, /history or /replay."""
    message = update.effective_message
    place = place_of_update(update)
    if message is None or message.text is None or place is None or message.from_user is None:
        return
    runtime = runtime_of(context)
    command = command_name(message)
    user = message.from_user
    answer = await runtime.answering(place, user.id, user.language_code, message.message_id)
    tr = answer.tr
    stats_bot = runtime.stats
    assert stats_bot is not None, "telesnap.app gives the runtime its stats"
    if posted_as_a_chat(answer, message):
        return
    if command != "replay" and command_arguments(message):
        # "/stats Ann" would show the sender's own figures as if they were Ann's.
        refuse(answer, tr.gettext("/{command} takes no arguments.").format(command=command))
    elif place.chat_type == "private" and command in KEPT_PER_GROUP:
        # No game is played here, and a leaderboard of other people is not shown here.
        text = tr.gettext(
            "🏆 Leaderboards and game history are kept per group: send /{command} in a"
            " group where you play. Here /stats shows your own figures."
        ).format(command=command)
        answer.say(text)
    elif command == "stats":
        await _send_stats(answer, stats_bot, message)
    elif command == "leaderboard":
        view = await stats_bot.service.leaderboard(place.chat_id)
        await send_leaderboard(answer, view, stats_bot.signer.in_chat(place.chat_id))
    elif command == "history":
        page = await stats_bot.service.history(place.chat_id)
        keyboard = history_keyboard(page, stats_bot.signer.in_chat(place.chat_id), tr)
        answer.say(render_history(page, tr), keyboard)
    else:
        await _send_replay(answer, stats_bot, message)


async def _send_stats(answer: Answerer, stats_bot: StatsBot, message: Message) -> None:
    place, tr = answer.place, answer.tr
    reply_to = replied_to(message)
    replied = reply_to.from_user if reply_to else None
    if place.chat_type == "private":  # a private chat shows its person's own figures only
        replied = None
    target = replied if replied is not None and not replied.is_bot else message.from_user
    if target is None:
        return
    view = await stats_bot.service.player(place.chat_id, target.id, target.full_name)
    text = render_player_stats(view, tr, private=place.chat_type == "private")
    if not view.can_plot:
        answer.say(text)
        return
    from ..render.charts import stats_chart  # on the first picture: see _leaderboard_picture

    chart = await asyncio.to_thread(
        partial(
            stats_chart,
            view.reaction_counts,
            view.ratings,
            view.chat_ratings,
            tr,
            ratings_from=view.ratings_from,
            chat_rating_games=view.chat_rating_games,
        )
    )
    caption = directed(text, tr)  # as the caption shows it, marks included
    if shown_length(caption) > MAX_CAPTION:
        caption = tr.gettext("📊 Reaction times and rating")
        answer.say(text)
    answer.upload("photo", chart, f"stats-{target.id}.png", caption)


async def _send_replay(answer: Answerer, stats_bot: StatsBot, message: Message) -> None:
    """/replay ID sends the game as a film; /replay ID file sends its move-by-move file."""
    tr = answer.tr
    words = command_arguments(message)
    as_file = len(words) == 2 and words[1].lower() == REPLAY_FILE_OPTION
    if (
        not 1 <= len(words) <= 2
        or (len(words) == 2 and not as_file)
        or not words[0].lstrip("#").isdecimal()
    ):
        text = tr.gettext(
            "Write /replay ID to watch a game, or /replay ID file for its moves; "
            "/history lists the games."
        )
        answer.say(text)
        return
    game_id = int(words[0].lstrip("#"))
    no_game = tr.gettext("No game #{id} has ended in this chat.")
    if len(str(game_id)) > MAX_GAME_ID_DIGITS:  # no game has such a number: not looked for
        answer.say(no_game.format(id=shorten(str(game_id), TYPED_WORD_LIMIT)))
        return
    try:
        document = await stats_bot.service.replay(answer.place.chat_id, game_id)
    except Refused:
        answer.say(no_game.format(id=game_id))
        return
    film = b""
    if not as_file:
        from ..render.replay_film import replay_film  # Pillow and fontTools: on the first film

        film = await asyncio.to_thread(
            replay_film, game_id, document.history, document.game.players, tr
        )
    caption = replay_caption(document.game, tr, film=bool(film))
    if film:
        answer.upload("animation", film, f"snap-game-{game_id}.gif", caption)
    else:
        answer.upload("document", document.text.encode(), document.file_name, caption)


REPLAY_FILE_OPTION = "file"
"""The word after /replay ID that asks for the move-by-move file instead of the film."""


def replay_caption(game: GameLine, tr: gettext.NullTranslations, *, film: bool = False) -> str:
    """The caption of a /replay film or file, directed then cut to fit: the game's line, a hint.

    Under a film, the hint is how to get the file; under the file, how to check it.
    """
    if film:
        hint = tr.gettext("<code>/replay {id} file</code> sends every move as a file.")
        hint = hint.format(id=game.game_id)
    else:
        hint = tr.gettext(
            "One operation a line: seq, kind, JSON. Check it with: telesnap replay FILE"
        )
    return within_length(directed(render_game_line(game, tr) + "\n" + hint, tr), MAX_CAPTION)


def within_length(markup: str, limit: int) -> str:
    """Cut HTML so that its text (as Telegram counts it) fits ``limit``; tags stay whole.

    Only text is cut, never a character reference, and open tags are closed, so it still parses.

    >>> within_length("<b>Ann &amp; Bob</b> won", 6)
    '<b>Ann &amp;…</b>'
    >>> within_length("<b>short</b>", 100)
    '<b>short</b>'
    """
    if shown_length(markup) <= limit:
        return markup
    cutter = _Cutter(limit)
    cutter.feed(markup)
    cutter.close()
    return "".join(cutter.out) + "".join(f"</{tag}>" for tag in reversed(cutter.open_tags))


class _Cutter(HTMLParser):
    """Copies HTML until its text reaches the limit (an ellipsis marks the cut)."""

    def __init__(self, limit: int) -> None:
        super().__init__(convert_charrefs=True)
        self._room = limit - 1  # the text is known to be too long: keep room for the "…"
        self._full = False
        self.out: list[str] = []
        self.open_tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if not self._full:
            self.out.append(self.get_starttag_text() or f"<{tag}>")
            self.open_tags.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self._full and tag in self.open_tags:
            while self.open_tags:
                last = self.open_tags.pop()
                self.out.append(f"</{last}>")
                if last == tag:
                    break

    def handle_data(self, data: str) -> None:
        if self._full:
            return
        if utf16_length(data) > self._room:
            kept = ""
            for character in data:
                if utf16_length(kept + character) > self._room:
                    break
                kept += character
            data = kept + "…"
            self._full = True
        else:
            self._room -= utf16_length(data)
        self.out.append(html.escape(data, quote=False))


def _shows(message: Message, text: str, keyboard: InlineKeyboardMarkup | None) -> bool:
    """Whether the message already shows ``text`` and ``keyboard`` (an edit would fail)."""
    current = message.reply_markup.to_dict() if message.reply_markup else None
    wanted = keyboard.to_dict() if keyboard else None
    return message.text == plain_text(text) and current == wanted


@finishing
async def on_stats_button(update: Update, context: Context) -> None:
    """A press on a leaderboard or history button: edit that message to the new page.

    The button must be signed for this chat and be on this message: a modified client can send a
    leaderboard's data for a board or a lobby, which must stay what it is.
    """
    query = update.callback_query
    if query is None:
        return
    runtime = runtime_of(context)
    stats_bot = runtime.stats
    assert stats_bot is not None, "telesnap.app gives the runtime its stats"
    toast_tr = translator(language_of(query.from_user.language_code))
    place = place_of_update(update)
    message = query.message
    if place is None or not isinstance(message, Message):
        await refuse_press(update, runtime, toast_tr.gettext("This button is not valid."))
        return
    signer = stats_bot.signer.in_chat(place.chat_id)
    button = signer.decode(query.data)
    if button is None or not carries_button(message.reply_markup, query.data):
        await refuse_press(update, runtime, toast_tr.gettext("This button is not valid."))
        return
    tr = translator(await runtime.language(place, query.from_user.language_code))
    board = button.ranking()
    if board is not None:
        ranking, is_global = board
        view = await stats_bot.service.leaderboard(place.chat_id, ranking, is_global=is_global)
        if message.photo:  # a leaderboard sent as a picture: a new picture and caption
            await query.answer()
            await edit_leaderboard_picture(runtime, place, message, view, signer, tr)
            return
        text = render_leaderboard(view, tr)
        keyboard: InlineKeyboardMarkup | None = leaderboard_keyboard(view, signer, tr)
    else:
        page = await stats_bot.service.history(place.chat_id, button.page)
        text = render_history(page, tr)
        keyboard = history_keyboard(page, signer, tr)
    await query.answer()
    text = directed(text, tr)  # as the message shows it, so an unchanged one is seen as such
    if not _shows(message, text, keyboard):
        runtime.edit(place, message.message_id, text, keyboard, written_in=tr)


async def _leaderboard_picture(view: LeaderboardView, tr: gettext.NullTranslations) -> bytes:
    # matplotlib takes about half a second to import: a worker starts without it (a
    # restart is that much quicker) and loads it when it draws its first picture.
    from ..render.charts import leaderboard_picture

    rows = leaderboard_rows(view, tr)
    return await asyncio.to_thread(leaderboard_picture, leaderboard_title(view, tr), rows, tr)


async def send_leaderboard(
    answer: Answerer, view: LeaderboardView, signer: StatsButtonSigner
) -> None:
    """Send ``view`` in the topic, as a picture when it lists enough players."""
    tr = answer.tr
    keyboard = leaderboard_keyboard(view, signer, tr)
    if not wants_picture(view):
        answer.say(render_leaderboard(view, tr), keyboard)
        return
    picture = await _leaderboard_picture(view, tr)
    answer.upload("photo", picture, LEADERBOARD_FILE_NAME, _leaderboard_caption(view, tr), keyboard)


def _leaderboard_caption(view: LeaderboardView, tr: gettext.NullTranslations) -> str:
    """A leaderboard picture's caption, which loses rows from its end where Telegram's limit asks.

    The rows lost count among the players ranked below (the picture shows them); who is listed
    and how ratings move stay.
    """
    caption = directed(render_leaderboard(view, tr), tr)
    shown = len(view.entries)
    while shown > 1 and shown_length(caption) > MAX_CAPTION:
        shown -= 1
        lost = len(view.entries) - shown
        cut = replace(view, entries=view.entries[:shown], more=view.more + lost)
        caption = directed(render_leaderboard(cut, tr), tr)
    return within_length(caption, MAX_CAPTION)


async def edit_leaderboard_picture(
    runtime: Runtime,
    place: Place,
    message: Message,
    view: LeaderboardView,
    signer: StatsButtonSigner,
    tr: gettext.NullTranslations,
) -> None:
    """Show ``view`` in ``message``, a leaderboard sent as a picture: new picture and caption."""
    picture = await _leaderboard_picture(view, tr)
    keyboard = leaderboard_keyboard(view, signer, tr)
    caption = _leaderboard_caption(view, tr)
    runtime.send(
        PhotoEditPost(
            place.chat_id, message.message_id, picture, LEADERBOARD_FILE_NAME, caption, keyboard
        )
    )
