"""A sandbox started in-process on a free port, and people who play through its emulator."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp

from telesnap.emulator.client import EmulatorClient
from telesnap.emulator.guard import KEY_HEADER
from telesnap.emulator.records import TranscriptMessage
from telesnap.sandbox.app import Sandbox, SandboxOptions
from telesnap.sandbox.robots import read_board

GROUP_ID = -1
"""The sandbox's first group, "Snap club" (Ann creator, Bob member)."""
ANN, BOB = 1001, 1002


@asynccontextmanager
async def running_sandbox(
    tmp_path: Path, *, flood_limits: bool = False, roster: bool = False, port: int = 0
) -> AsyncIterator[Sandbox]:
    """A sandbox on a loopback port (0: a free one) with shuffle seed 7, stopped at the end."""
    options = SandboxOptions(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'sandbox.db'}",
        port=port,
        flood_limits=flood_limits,
        shuffle_seed=7,
        roster_file=tmp_path / "sandbox.db.sandbox.json" if roster else None,
    )
    sandbox = Sandbox(options)
    await sandbox.start()
    try:
        yield sandbox
    finally:
        await sandbox.stop()


def keyed_session(sandbox: Sandbox) -> aiohttp.ClientSession:
    """An HTTP session that sends the sandbox's key, as its page does."""
    return aiohttp.ClientSession(headers={KEY_HEADER: sandbox.key})


def is_board(message: TranscriptMessage) -> bool:
    return "face-down" in message.text or " wins" in message.text


class Players:
    """People of a sandbox chat who act through the emulator's control API."""

    def __init__(self, sandbox: Sandbox, chat_id: int = GROUP_ID) -> None:
        self.client = EmulatorClient(sandbox.url, key=sandbox.key)
        self.chat_id = chat_id
        self.names = {
            " ".join(p for p in (u.first_name, u.last_name) if p): u.id
            for u in sandbox.emulator.world.users.values()
            if not u.is_bot
        }

    async def close(self) -> None:
        await self.client.close()

    async def command(self, name: str, text: str) -> int:
        return await self.client.send_text(self.chat_id, self.names[name], text)

    async def wait_for(self, fragment: str, after: int = 0) -> TranscriptMessage:
        return await self.client.wait_for_message(
            self.chat_id, lambda m: fragment in m.text and m.message_id > after
        )

    async def press(self, name: str, message: TranscriptMessage, button: str) -> str:
        query_id = await self.client.press(
            self.chat_id, message.message_id, self.names[name], button_text=button
        )
        await self.client.wait_for_toast(callback_query_id=query_id)
        return query_id

    async def latest_board(self, after: int = 0) -> TranscriptMessage:
        return await self.client.wait_for_message(
            self.chat_id, lambda m: is_board(m) and m.message_id > after
        )

    async def start_game(self, names: list[str]) -> TranscriptMessage:
        first, *others = names
        sent = await self.command(first, "/newgame")
        lobby = await self.wait_for("A game of Snap is starting", after=sent)
        for other in others:
            await self.press(other, lobby, "Join")
        await self.press(first, lobby, "Start")
        return await self.latest_board(after=lobby.message_id)

    async def play_to_the_end(self, names: list[str], snapper: str) -> TranscriptMessage:
        """Start a game and flip (and snap) until it ends; return the last board."""
        board = await self.start_game(names)
        for _ in range(300):
            reading = read_board(board.text)
            if reading.turn is None:
                return board
            if reading.has_match:
                await self.press(snapper, board, "Snap!")
            else:
                await self.press(reading.turn, board, "Flip")
            board = await self.latest_board(after=board.message_id)
        raise AssertionError("the game did not end")
