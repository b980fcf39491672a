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
import tempfile
from pathlib import Path

from telesnap.app import BotRunner
from telesnap.bot.delivery.lanes import FloodLimits as BotFloodLimits
from telesnap.config import Settings
from telesnap.emulator.client import EmulatorClient, Press
from telesnap.emulator.config import EmulatorConfig
from telesnap.emulator.config import FloodLimits as TelegramFloodLimits
from telesnap.emulator.records import TranscriptMessage
from telesnap.emulator.testing import running_emulator

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
    scale = args.scale
    telegram = TelegramFloodLimits(group_window_seconds=60.0 / scale)
    bot_limits = BotFloodLimits(group_window_s=61.0 / scale)
    async with running_emulator(EmulatorConfig(flood=telegram)) as emulator:
        client = emulator.client
        users = {name: int((await client.create_user(name))["id"]) for name in PLAYERS}
        chat = await client.create_chat("group", title="Fast", members=list(users.values()))
        chat_id = int(chat["id"])
        with tempfile.TemporaryDirectory() as folder:
            settings = Settings(
                token=emulator.token,
                api_url=emulator.url,
                database_url=f"sqlite+aiosqlite:///{Path(folder) / 'pace.db'}",
            )
            runner = BotRunner(settings, limits=bot_limits, shuffle_seed=7)
            await runner.start()
            try:
                await start_game(client, chat_id, users)
                await drive(client, chat_id, users, args.seconds, args.reaction / scale)
            finally:
                await runner.stop()
        await report(client, chat_id, scale)


async def start_game(client: EmulatorClient, chat_id: int, users: dict[str, int]) -> None:
    """Open a lobby, let everyone join, start."""
    await client.send_command(chat_id, users["Ann"], "newgame")
    lobby = await client.wait_for_message(chat_id, lambda m: "Join" in m.button_texts)
    for name in PLAYERS[1:]:
        query = await client.press(chat_id, lobby.message_id, users[name], button_text="Join")
        await client.wait_for_toast(callback_query_id=query)
    query = await client.press(chat_id, lobby.message_id, users["Ann"], button_text="Start")
    await client.wait_for_toast(callback_query_id=query)


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
