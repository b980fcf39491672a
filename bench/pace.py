"""Pace benchmark: how long a fast group waits between boards under Telegram's limits.

Run: .venv/bin/python bench/pace.py [--scale 6] [--seconds 40] [--reaction 0.4]

Three players play one game in a group, as fast as the boards come: on every
board that reaches them, the player on turn presses Flip (or, when the board
shows a match, one of them presses Snap!) ``--reaction`` seconds after it
arrived. The emulator enforces Telegram's limits (20 messages a minute per
group, 30 a second per bot) and the bot its own; both windows are shortened
``--scale`` times so that minutes of play take seconds, and every figure is
reported scaled back to Telegram's time.

Reported, from the emulator's transcript (its clock): the boards shown, the
flips they show, the longest and median wait between two boards, the presses
refused as an old message, the 429 answers, and the summary lines
("…and N earlier events") that hid events.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import re
import statistics

from scaled_group import bot_running, scaled_group, start_game

from telesnap.emulator.client import EmulatorClient, Press
from telesnap.emulator.records import TranscriptMessage

PLAYERS = ("Ann", "Bob", "Cid")
PLAYER_LINE = re.compile(r"^(?:▶ )?(?P<name>.+?): (?P<top>\S+) · \d+ face-down · \d+ face-up$")
TURN_LINE = re.compile(r"^Turn: (?P<name>.+)$")
FLIP_LINE = re.compile(r"^\w+ (?:turns their pile over and )?flips ", re.MULTILINE)


def is_board(message: TranscriptMessage) -> bool:
    """Whether a bot message is a game board (the table with buttons)."""
    return "face-down" in message.text and not message.deleted


def read(message: TranscriptMessage) -> tuple[dict[str, str], str | None]:
    """The face-up tops and the player on turn of a board."""
    tops: dict[str, str] = {}
    turn = None
    for line in message.text.splitlines():
        if found := PLAYER_LINE.match(line):
            tops[found["name"]] = found["top"]
        elif found := TURN_LINE.match(line):
            turn = found["name"]
    return tops, turn


def button(message: TranscriptMessage, action: str) -> str | None:
    """The callback data of the board's button whose data starts with ``action`` (f, s)."""
    for row in message.buttons:
        for item in row:
            data = item.get("callback_data", "")
            if data.startswith(f"{action}:"):
                return str(data)
    return None


async def play(args: argparse.Namespace) -> None:
    """Play one fast game and print the figures."""
    async with scaled_group(args.scale, PLAYERS, "Fast") as group:
        async with bot_running(group):
            await start_game(group)
            await drive(
                group.client, group.chat_id, group.users, args.seconds, args.reaction / args.scale
            )
        await report(group.client, group.chat_id, args.scale)


async def drive(
    client: EmulatorClient, chat_id: int, users: dict[str, int], seconds: float, reaction: float
) -> None:
    """Act on every new board, ``reaction`` seconds after it arrives, for ``seconds``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    acted: set[int] = set()
    turn_index = 0
    while loop.time() < deadline:

        async def newest_unseen() -> TranscriptMessage | None:
            boards = [m for m in await client.transcript(chat_id) if is_board(m)]
            if boards and boards[-1].message_id not in acted and boards[-1].buttons:
                return boards[-1]
            return None

        try:
            board = await client.wait_for(
                newest_unseen, timeout=max(0.1, deadline - loop.time()), what="a board"
            )
        except AssertionError:
            return
        acted.add(board.message_id)
        tops, turn = read(board)
        ranks = [top[:-1] for top in tops.values() if top != "—"]
        snap = button(board, "s") if len(ranks) != len(set(ranks)) else None
        if snap is not None:
            caller = PLAYERS[turn_index % len(PLAYERS)]
            turn_index += 1
            press = Press(chat_id, board.message_id, users[caller], data=snap, offset=reaction)
        else:
            flip = button(board, "f")
            if turn is None or flip is None:
                continue
            press = Press(chat_id, board.message_id, users[turn], data=flip, offset=reaction)
        await client.press_many([press])


async def report(client: EmulatorClient, chat_id: int, scale: float) -> None:
    """Print the figures of the game just played (times scaled back to Telegram's)."""
    messages = await client.transcript(chat_id)
    boards = [m for m in messages if "face-down" in m.text]
    times = sorted(m.sent_at for m in boards)
    gaps = [(later - earlier) * scale for earlier, later in itertools.pairwise(times)]
    flips = sum(len(FLIP_LINE.findall(m.text)) for m in messages)
    hidden = sum(m.text.count("earlier event") for m in messages)
    toasts = await client.toasts()
    old = sum(1 for toast in toasts if toast.text and "old message" in toast.text)
    refused = [call for call in await client.calls() if call.status == 429]
    span = (times[-1] - times[0]) * scale if times else 0.0
    print(f"boards shown           {len(boards)} over {span:.0f} s (Telegram time)")
    print(f"flips shown            {flips}")
    if gaps:
        print(f"longest wait           {max(gaps):.1f} s")
        print(f"median wait            {statistics.median(gaps):.1f} s")
        print(f"waits over 5 s         {sum(1 for gap in gaps if gap > 5)}")
    print(f"'old message' toasts   {old}")
    print(f"429 answers            {len(refused)}")
    print(f"hidden-event lines     {hidden}")


def main() -> None:
    """Parse the arguments and play."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=6.0, help="time runs this much faster")
    parser.add_argument("--seconds", type=float, default=40.0, help="wall seconds of play")
    parser.add_argument("--reaction", type=float, default=0.4, help="seconds before a press")
    asyncio.run(play(parser.parse_args()))


if __name__ == "__main__":
    main()
