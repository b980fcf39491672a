"""Skip ahead and the calls around it: a reaction time is the person's, not the skip's."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from telesnap.sandbox.app import Sandbox
from telesnap.storage.database import create_engine, session_factory
from telesnap.storage.models import GameOperation

from .helpers import Players, running_sandbox
from .test_interface import flip_until_a_match

SKIP_SECONDS = 60
"""Less than the turn timer (5 min): the board stays the newest, nothing flips for anyone."""


async def reaction_times_of_calls(sandbox: Sandbox) -> list[int | None]:
    engine = create_engine(sandbox.options.database_url)
    try:
        async with session_factory(engine)() as session:
            calls = select(GameOperation.reaction_ms).where(GameOperation.kind == "snap_called")
            return list((await session.scalars(calls)).all())
    finally:
        await engine.dispose()


async def test_a_call_on_a_board_shown_before_a_skip_does_not_count_the_skip(
    tmp_path: Path,
) -> None:
    async with running_sandbox(tmp_path) as sandbox:
        players = Players(sandbox)
        try:
            await players.start_game(["Ann", "Bob"])
            board = await flip_until_a_match(players)
            sandbox.skip(SKIP_SECONDS)
            await players.press("Bob", board, "Snap!")
            await players.client.wait_until_idle()
        finally:
            await players.close()
        reactions = await reaction_times_of_calls(sandbox)
    assert len(reactions) == 1
    reaction = reactions[0]
    assert reaction is not None
    assert reaction < SKIP_SECONDS * 1000, f"{reaction} ms counts the {SKIP_SECONDS} s skip"
