"""The bot's own sentences: refusals, toasts and help (all translatable)."""

from __future__ import annotations

import gettext

from ...game import CallKind, CallVerdict
from ...game.engine import MAX_PLAYERS, MIN_PLAYERS
from ...services.types import Reason, Refused
from .boards import milliseconds, name
from .i18n import isolate
from .lobby import clock_time
from .names import TYPED_WORD_LIMIT, shorten


def refusal_text(refused: Refused, tr: gettext.NullTranslations) -> str:
    """A short answer saying why an action was refused (HTML: a toast takes its plain text)."""
    reason = refused.reason
    details = refused.details
    most = int(details.get("max", MAX_PLAYERS))
    least = int(details.get("min", MIN_PLAYERS))
    texts = {
        Reason.PRIVATE_CHAT: played_in_groups(tr),
        Reason.NO_GAME: (
            tr.gettext("The game has not started yet: its creator or an admin sends /startgame.")
            if details.get("lobby")
            else tr.gettext("There is no game here. Send /newgame to open one.")
        ),
        Reason.GAME_EXISTS: (
            tr.gettext("A game is already being played here; wait for it to end.")
            if details.get("running")
            else tr.gettext("You opened a game here already: send /startgame when everyone is in.")
            if details.get("opened")
            else tr.gettext(
                "A game is already open here, and you are in it: its creator or an admin "
                "sends /startgame."
            )
            if details.get("joined")
            else tr.gettext("A game is already open here. Send /join to take part.")
        ),
        Reason.NOT_IN_LOBBY: (
            tr.gettext("The game has started, and you are playing in it.")
            if details.get("playing")
            else tr.gettext("The game has already started; wait for the next one.")
        ),
        Reason.ALREADY_JOINED: tr.gettext("You have already joined."),
        Reason.NOT_JOINED: tr.gettext("You have not joined this game."),
        Reason.TARGET_NOT_PLAYING: tr.gettext("That player is not in this game."),
        Reason.LOBBY_FULL: tr.ngettext(
            "The game is full ({count} player).", "The game is full ({count} players).", most
        ).format(count=most),
        Reason.TOO_FEW_PLAYERS: tr.ngettext(
            "Snap needs at least {count} player.", "Snap needs at least {count} players.", least
        ).format(count=least),
        Reason.NOT_CREATOR: (
            tr.gettext("Only {name}, who runs this game, or a chat admin can do that.").format(
                name=isolate(name(str(details["name"])), tr)
            )
            if "name" in details
            else tr.gettext("Only the game's creator or a chat admin can do that.")
        ),
        Reason.NOT_ADMIN: tr.gettext("Only a chat admin can do that."),
        Reason.ADMIN_UNKNOWN: tr.gettext(
            "I could not ask Telegram whether you are an admin; try again in a moment."
        ),
        Reason.NOT_PLAYING: tr.gettext("You are not playing in this game."),
        Reason.PLAYER_OUT: tr.gettext("You have no cards left, so you are out of this game."),
        Reason.NOT_YOUR_TURN: tr.gettext("It is not your turn to flip."),
        Reason.RACE_OPEN: tr.gettext("Wait: a Snap race is being decided."),
        Reason.ALREADY_CALLED: tr.gettext("You have already called; wait for the result."),
        Reason.REPEATED_PRESS: tr.gettext("You pressed that already: it counts once."),
        Reason.OLD_BOARD: (
            tr.gettext("The table changed before your press arrived: look again.")
            if details.get("live")
            else tr.gettext("This is an old message: use the newest one.")
        ),
        Reason.GAME_OVER: tr.gettext("This game is over."),
        Reason.OTHER_GAME: tr.gettext(
            "This button belongs to a game that is not being played here."
        ),
        Reason.BAD_BUTTON: tr.gettext("This button is not valid."),
        Reason.UNKNOWN_SETTING: tr.gettext("There is no setting called {name}.").format(
            name=isolate(name(shorten(str(details.get("name", "?")), TYPED_WORD_LIMIT)), tr)
        ),
        Reason.BAD_SETTING_VALUE: tr.gettext("{name} must be one of: {allowed}.").format(
            name=isolate(name(str(details.get("name", "?"))), tr),
            allowed=isolate(str(details.get("allowed", "?")), tr),
        ),
        Reason.DUPLICATE_UPDATE: tr.gettext("Already done."),
        Reason.LOBBY_TOO_LONG: tr.gettext(
            "A lobby stays open 24 hours at most: this one closes at {time} UTC."
        ).format(time=clock_time(str(details.get("closes_at", "")))),
        Reason.PRIVATE_CHAT_SETTING: tr.gettext(
            "In a private chat only the language can be set (for example "
            "/settings language es): a game's settings are set in its group."
        ),
    }
    return texts[reason]


def played_in_groups(tr: gettext.NullTranslations) -> str:
    """Where Snap is played: a private chat's answer to a game command, and its help's start."""
    return tr.gettext("Snap is played in groups: add me to a group and send /newgame there.")


def verdict_toast(verdict: CallVerdict, behind_ms: int | None, tr: gettext.NullTranslations) -> str:
    """What a caller is told about their call."""
    if verdict is CallVerdict.WON:
        return tr.gettext("⚡ You won the race!")
    if verdict is CallVerdict.TIED:
        return tr.gettext("🤝 A tie: the piles go into the Snap Pot.")
    if verdict is CallVerdict.TOO_SLOW:
        return tr.gettext("🐢 Too slow by {time}.").format(time=milliseconds(behind_ms or 0, tr))
    if verdict is CallVerdict.TOO_LATE:
        return tr.gettext("⌛ Too late: the cards have changed since.")
    if verdict is CallVerdict.WRONG:
        return tr.gettext("❌ Nothing matches! That call costs you a card.")
    return tr.gettext("⏱ Called! Waiting for the others…")


def race_called_off_toast(tr: gettext.NullTranslations) -> str:
    """The answer to a caller whose race the end of the game called off."""
    return tr.gettext("The game ended before the race was decided: nobody wins it.")


def race_over_toast(tr: gettext.NullTranslations) -> str:
    """The answer to a caller when the race was decided but their own result is not known."""
    return tr.gettext("The race was decided: see the chat.")


def race_delayed_toast(tr: gettext.NullTranslations) -> str:
    """The answer to a caller while the decision of their race is delayed by a failure."""
    return tr.gettext("The race is taking longer to decide: the result will be shown in the chat.")


def wrong_call_toast(kind: CallKind, penalised: bool, tr: gettext.NullTranslations) -> str:
    """The toast of a wrong call, with or without the penalty, naming what its kind needs.

    A player who sees the pot match and pressed Snap! learns why that was wrong (R10).
    """
    if kind is CallKind.SNAP_POT:
        if penalised:
            return tr.gettext(
                "❌ No face-up card matches the Snap Pot! That call costs you a card."
            )
        return tr.gettext("❌ No face-up card matches the Snap Pot!")
    if penalised:
        return tr.gettext("❌ No two face-up cards match! That call costs you a card.")
    return tr.gettext("❌ No two face-up cards match!")


_GROUP_COMMANDS = (
    "/newgame, /join, /leave, /startgame, /flip, /snap, /snappot, /endgame, /kick, /extend, "
    "/notify, /leaderboard, /history, /replay, /settings, /forgetchat"
)
"""The commands of a group: games are played there (/notify and /settings do other things in a
private chat, where its own list names them)."""


def private_help_text(tr: gettext.NullTranslations) -> str:
    """/help in the private chat: what it answers there, then what is played in a group."""
    return "\n".join(
        [
            _snap_line(tr),
            "",
            tr.gettext("<b>Here, in our private chat</b>"),
            tr.gettext("/stats: your figures in every chat"),
            tr.gettext("/settings language CODE: the language I write to you in"),
            tr.gettext("/notify: the chats that tell you when a game opens"),
            tr.gettext("/rules: the rules"),
            tr.gettext("/start, /help: what this bot does, and this list"),
            tr.gettext("/forgetme: erase what the bot keeps about you"),
            "",
            tr.gettext("<b>In a group</b>"),
            tr.gettext("{commands}: /help there says what each does.").format(
                commands=_GROUP_COMMANDS
            ),
        ]
    )


def _snap_line(tr: gettext.NullTranslations) -> str:
    return tr.gettext(
        "<b>Snap</b>: flip cards in turn; when two face-up cards match, be the first to press Snap!"
    )


def help_text(tr: gettext.NullTranslations) -> str:
    """The /help message: every command the bot answers, grouped as players look for them."""
    return "\n".join(
        [
            _snap_line(tr),
            "",
            tr.gettext("<b>Play</b>"),
            tr.gettext("/newgame: open a game here (then Join and Start)"),
            tr.gettext("/join, /leave: join or leave the game"),
            tr.gettext("/startgame: deal the cards (creator or admin)"),
            tr.gettext("/flip: flip your card when it is your turn"),
            tr.gettext("/snap, /snappot: call Snap! or Snap Pot!"),
            tr.gettext("/endgame: stop the game (creator or admin)"),
            tr.gettext("/kick: reply to a player's message to remove them (creator or admin)"),
            tr.gettext("/extend [minutes]: keep the lobby open longer (creator or admin)"),
            tr.gettext("/notify: a private message when a game opens here (/notify off stops it)"),
            "",
            tr.gettext("<b>Stats</b>"),
            tr.gettext("/stats: your stats (reply to someone's message to see theirs)"),
            tr.gettext("/leaderboard: the best players of this chat"),
            tr.gettext("/history: the games played here"),
            tr.gettext("/replay ID: one game, move by move (the ID is in /history)"),
            "",
            tr.gettext("<b>Settings and help</b>"),
            tr.gettext("/settings: show or change this chat's settings"),
            tr.gettext("/rules: the rules"),
            tr.gettext("/start, /help: what this bot does, and this list"),
            "",
            tr.gettext("<b>Your data</b>"),
            tr.gettext("/forgetme: erase what the bot keeps about you"),
            tr.gettext("/forgetchat: erase this chat's games, stats and settings (admins)"),
        ]
    )


def too_many_presses(tr: gettext.NullTranslations) -> str:
    """A press the intake gate turned away (its sender's budget is spent)."""
    return tr.gettext("⏳ Too many presses: wait a few seconds, then try again.")


def chat_too_busy(tr: gettext.NullTranslations) -> str:
    """A press the intake gate turned away: a crowd floods its chat (not the presser's doing)."""
    return tr.gettext("⏳ This chat is very busy right now: try again in a few seconds.")


def cool_down(tr: gettext.NullTranslations) -> str:
    """A press the intake gate turned away: its sender's updates keep being refused."""
    return tr.gettext(
        "⏳ Too many of your actions were refused: wait a few seconds, then try again."
    )


def slow_to_store(tr: gettext.NullTranslations) -> str:
    """A press that could not be stored for a while (the database is away): it counts later."""
    return tr.gettext("⏳ I am slow right now: your press is kept and counts as soon as I can.")
