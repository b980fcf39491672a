"""Board styles benchmark: what a 90-flip game costs a group in each style.

Run: .venv/bin/python bench/board_styles.py [--style messages|live|both] [--flips 90] [--scale 5]

Two players play one game in a group until its flip limit: on every board
that reaches them, the player on turn presses Flip ``--reaction`` seconds
later. The emulator enforces Telegram's limits (20 messages or edits a minute
per group) and the bot its own; both windows are shortened ``--scale`` times,
and every time is reported scaled back to Telegram's.

Reported, from the emulator's transcript and edit history (its clock): the
bot's messages in the chat, the boards still with buttons one minute after the
game's end, the most boards with buttons at one moment, the longest wait
between two boards (a new board message, or an edit of a live board's
table), the API calls spent, and the 429 answers.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import re

from scaled_group import bot_running, scaled_group, start_game

from telesnap.emulator.client import EmulatorClient, Press
from telesnap.emulator.records import TranscriptMessage

PLAYERS = ("Ann", "Bob")
TURN_LINE = re.compile(r"^Turn: (?P<name>.+)$", re.MULTILINE)
ENDINGS = ("final standings", "was stopped")
SENDS = ("sendMessage", "editMessageText", "editMessageReplyMarkup")


def versions(message: TranscriptMessage) -> list[tuple[float, str, bool]]:
    """The message as sent and after each edit: (since, text, has buttons), oldest first."""
    starts = [message.sent_at, *(revision.replaced_at for revision in message.history)]
    states = [(r.text, r.reply_markup) for r in message.history]
    states.append((message.text, message.reply_markup))
    return [
        (since, text, bool(markup and markup.get("inline_keyboard")))
        for since, (text, markup) in zip(starts, states, strict=True)
    ]


def with_buttons_at(boards: list[TranscriptMessage], moment: float) -> int:
    """How many boards had buttons at ``moment``."""
    count = 0
    for board in boards:
        now = [state for state in versions(board) if state[0] <= moment]
        count += bool(now and now[-1][2])
    return count


def flip_button(message: TranscriptMessage) -> str | None:
    """The callback data of the board's Flip button, if it has one."""
    for row in message.buttons:
        for button in row:
            data = str(button.get("callback_data", ""))
            if data.startswith("f:"):
                return data
    return None


async def play(style: str, args: argparse.Namespace) -> None:
    """Play one game in ``style`` and print its figures."""
    minute = 60.0 / args.scale
    async with scaled_group(args.scale, PLAYERS, "Styles", admins=True) as group:
        client, chat_id, users = group.client, group.chat_id, group.users
        async with bot_running(group):
            await configure(client, chat_id, users["Ann"], style, args.flips)
            await start_game(group)
            await drive(client, chat_id, users, args.reaction / args.scale)
            await client.wait_for(lambda: game_over(client, chat_id), timeout=600, what="the end")
            # One (scaled) minute after the end, plus a little: the figure is read at
            # end + minute from the recorded times, whatever happens after.
            await asyncio.sleep(minute * 1.1)
        await report(style, client, chat_id, args.scale)


async def configure(
    client: EmulatorClient, chat_id: int, admin: int, style: str, flips: int
) -> None:
    """Set the flip limit and, unless it is the default, the board style."""
    wanted = [f"flip_limit {flips}"] + ([f"board_style {style}"] if style != "messages" else [])
    for setting in wanted:
        sent = await client.send_command(chat_id, admin, "settings", setting)
        reply = await client.wait_for_message(chat_id, lambda m, s=sent: m.reply_to_message_id == s)
        if "Saved." not in reply.text:
            raise SystemExit(f"/settings {setting} refused: {reply.text}")


async def game_over(client: EmulatorClient, chat_id: int) -> bool | None:
    """True once the chat shows the game's end."""
    messages = await client.transcript(chat_id)
    return True if any(e in m.text for m in messages for e in ENDINGS) else None


async def drive(
    client: EmulatorClient, chat_id: int, users: dict[str, int], reaction: float
) -> None:
    """Flip on every new board, ``reaction`` seconds after it arrives, until the game ends."""
    pressed: set[str] = set()

    async def fresh() -> tuple[TranscriptMessage, str] | bool | None:
        messages = await client.transcript(chat_id)
        if any(e in m.text for m in messages for e in ENDINGS):
            return True
        for message in reversed(messages):
            data = flip_button(message)
            if data is not None and data not in pressed:
                return message, data
        return None

    while True:
        found = await client.wait_for(fresh, timeout=600, what="a new board")
        if found is True:
            return
        message, data = found
        pressed.add(data)
        turn = TURN_LINE.search(message.text)
        if turn is None:
            continue
        press = Press(chat_id, message.message_id, users[turn["name"]], data=data, offset=reaction)
        await client.press_many([press])


async def report(style: str, client: EmulatorClient, chat_id: int, scale: float) -> None:
    """Print the figures of the game just played (times scaled back to Telegram's)."""
    messages = await client.transcript(chat_id)
    boards = [m for m in messages if any("face-down" in v[1] for v in versions(m))]
    ends = [v[0] for m in messages for v in versions(m) if any(e in v[1] for e in ENDINGS)]
    end = min(ends)
    minute = 60.0 / scale
    shown = sorted(
        since
        for board in boards
        for since, text, _ in versions(board)
        if "face-down" in text or any(e in text for e in ENDINGS)
    )
    moments = sorted({v[0] for board in boards for v in versions(board)})
    most = max(with_buttons_at(boards, moment) for moment in moments)
    gaps = [(later - earlier) * scale for earlier, later in itertools.pairwise(shown)]
    calls = await client.calls()
    spent = [c for c in calls if c.method in SENDS and c.status == 200]
    refused = [c for c in calls if c.status == 429]
    print(f"style {style}")
    print(f"  messages in the chat               {len(messages)} ({len(boards)} boards)")
    print(f"  with buttons a minute after end    {with_buttons_at(boards, end + minute)}")
    print(f"  most with buttons at once          {most}")
    print(f"  longest wait between boards        {max(gaps, default=0.0):.1f} s")
    print(f"  game length                        {(end - shown[0]) * scale:.0f} s")
    print(f"  API calls (messages and edits)     {len(spent)}")
    print(f"  429 answers                        {len(refused)}")


def main() -> None:
    """Parse the arguments and play."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--style", choices=("messages", "live", "both"), default="both")
    parser.add_argument("--flips", type=int, default=90, help="the game's flip limit")
    parser.add_argument("--scale", type=float, default=5.0, help="time runs this much faster")
    parser.add_argument("--reaction", type=float, default=0.4, help="seconds before a press")
    args = parser.parse_args()
    for style in ("messages", "live") if args.style == "both" else (args.style,):
        asyncio.run(play(style, args))


if __name__ == "__main__":
    main()
