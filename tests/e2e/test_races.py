"""Snap races through the emulator: decided by receipt order and the tie window."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from telesnap.bot.ingress.receipts import ReceiptBook
from telesnap.bot.referee.races import RaceReferee
from telesnap.emulator.client import Press
from telesnap.emulator.testing import RunningEmulator
from telesnap.services.play.service import PlayService
from telesnap.services.play.store import GameStore
from telesnap.storage.database import create_engine

from .harness import Board, Table, database_file, table_with


async def flip_until_match(table: Table, board: Board) -> Board:
    for _ in range(80):
        if board.has_match:
            return board
        assert board.turn is not None
        await table.press(board.turn, board.message, "Flip")
        board = await table.next_board()
    pytest.fail("no match showed in 80 flips")


async def race(table: Table, first: str, second: str, gap_s: float) -> dict[str, str]:
    """``first`` then ``second`` press Snap! ``gap_s`` apart; return each one's toast."""
    board = await flip_until_match(table, await table.latest_board())
    presses = [
        Press(table.chat_id, board.message.message_id, table.players[first], button_text="Snap!"),
        Press(
            table.chat_id,
            board.message.message_id,
            table.players[second],
            button_text="Snap!",
            offset=gap_s,
        ),
    ]
    query_ids = await table.client.press_many(presses)
    toasts = [await table.client.wait_for_toast(callback_query_id=q) for q in query_ids]
    return {first: toasts[0].text, second: toasts[1].text}


async def deliveries_apart(table: Table) -> bool:
    """Whether the last two updates reached the bot in separate getUpdates answers."""
    last_two = (await table.client.updates())[-2:]
    first, second = (update.deliveries[0].at for update in last_two)
    return second > first


@pytest.mark.parametrize(
    ("window", "first_toast", "second_toast"),
    [(100, "A tie", "A tie"), (20, "You won the race", "Too slow by")],
)
@pytest.mark.parametrize("order", ["ann-first", "bob-first"])
async def test_presses_40_ms_apart_tie_or_win_by_the_tie_window(
    emulator: RunningEmulator,
    tmp_path: Path,
    window: int,
    first_toast: str,
    second_toast: str,
    order: str,
) -> None:
    first, second = ("Ann", "Bob") if order == "ann-first" else ("Bob", "Ann")
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob", "Cid"], admins=["Ann"]
    ) as table:
        await table.command("Ann", "settings", f"tie_window {window}")
        await table.wait_for_text("Saved.")
        await table.open_and_start(["Ann", "Bob", "Cid"])
        toasts = await race(table, first, second, gap_s=0.040)
        assert await deliveries_apart(table), "the two presses reached the bot together"
        assert first_toast in toasts[first]
        assert second_toast in toasts[second]
        after = await table.next_board()
        if window == 100:
            assert "called together" in after.message.text
            assert "Snap Pot:" in after.message.text
        else:
            assert f"{first} wins the Snap" in after.message.text
            behind = int(toasts[second].split("by ")[1].split(" ms")[0])
            assert behind > window


async def test_presses_in_one_batch_go_to_the_lower_update_id_with_no_tie_window(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob", "Cid"], admins=["Ann"]
    ) as table:
        await table.command("Ann", "settings", "tie_window 0")
        await table.wait_for_text("Saved.")
        await table.open_and_start(["Ann", "Bob", "Cid"])
        board = await flip_until_match(table, await table.latest_board())
        await table.client.pause_delivery()
        cid = await table.client.press(
            table.chat_id, board.message.message_id, table.players["Cid"], button_text="Snap!"
        )
        bob = await table.client.press(
            table.chat_id, board.message.message_id, table.players["Bob"], button_text="Snap!"
        )
        await table.client.resume_delivery()
        assert (
            await table.client.wait_for_toast(callback_query_id=cid)
        ).text == "⚡ You won the race!"
        bob_toast = await table.client.wait_for_toast(callback_query_id=bob)
        assert bob_toast.text == "🐢 Too slow by 0 ms."


# -- a race is decided however long it takes, and every caller is answered ----------------


async def calls_stored(database_url: str) -> bool | None:
    """True once a Snap call is in the stored history (None until then)."""
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            count = await connection.scalar(
                text("SELECT count(*) FROM game_operations WHERE kind = 'snap_called'")
            )
    finally:
        await engine.dispose()
    return True if count else None


async def test_a_race_whose_decision_fails_is_decided_on_a_retry(
    emulator: RunningEmulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failed: list[int] = []
    real_save = GameStore.save

    async def save_failing_the_first_decision(
        self: GameStore, uow: Any, row: Any, loaded: Any, operations: Any, **kwargs: Any
    ) -> None:
        if not failed and any(op.kind == "race_resolved" for op in operations):
            failed.append(row.id)
            raise OSError("the database went away")
        await real_save(self, uow, row, loaded, operations, **kwargs)

    monkeypatch.setattr(GameStore, "save", save_failing_the_first_decision)
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob", "Cid"], admins=["Ann"]
    ) as table:
        await table.command("Ann", "settings", "tie_window 1000")  # a tie however slow we are
        await table.wait_for_text("Saved.")
        await table.open_and_start(["Ann", "Bob", "Cid"])
        toasts = await race(table, "Ann", "Bob", gap_s=0.040)
        assert failed, "the first decision failed"
        assert "A tie" in toasts["Ann"]
        assert "A tie" in toasts["Bob"]
        after = await table.next_board()
        assert "called together" in after.message.text
        assert after.turn is not None
        assert (await table.press(after.turn, after.message, "Flip")).text == ""
        await table.next_board()


async def test_a_call_held_up_on_its_way_still_takes_part_in_its_race(
    emulator: RunningEmulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bob's press is stamped 40 ms after Ann's, then its handler is slow: still a tie."""
    real_call = PlayService.call
    bob: list[int] = []

    async def slow_for_bob(self: PlayService, place: Any, actor: Any, *args: Any) -> Any:
        if actor.user_id in bob:
            # Longer than the referee used to wait for calls on their way (2 s after
            # the window closed); the result must not depend on how long it is.
            await asyncio.sleep(3.0)
        return await real_call(self, place, actor, *args)

    monkeypatch.setattr(PlayService, "call", slow_for_bob)
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob", "Cid"], admins=["Ann"]
    ) as table:
        await table.command("Ann", "settings", "tie_window 500")
        await table.wait_for_text("Saved.")
        await table.open_and_start(["Ann", "Bob", "Cid"])
        bob.append(table.players["Bob"])
        toasts = await race(table, "Ann", "Bob", gap_s=0.040)
        assert "A tie" in toasts["Ann"]
        assert "A tie" in toasts["Bob"]
        assert "called together" in (await table.next_board()).message.text


async def test_a_race_the_game_ended_before_its_decision_answers_its_caller(
    emulator: RunningEmulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    game_over = asyncio.Event()
    real_wait = ReceiptBook.wait_for_calls

    async def wait_until_the_game_is_over(self: ReceiptBook, *args: Any, **kwargs: Any) -> None:
        await game_over.wait()  # the referee gets to the race only after /endgame
        await real_wait(self, *args, **kwargs)

    monkeypatch.setattr(ReceiptBook, "wait_for_calls", wait_until_the_game_is_over)
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob", "Cid"], admins=["Ann"]
    ) as table:
        await table.open_and_start(["Ann", "Bob", "Cid"])
        board = await flip_until_match(table, await table.latest_board())
        query_id = await table.client.press(
            table.chat_id, board.message.message_id, table.players["Bob"], button_text="Snap!"
        )
        await table.client.wait_for(lambda: calls_stored(table.database_url), what="the call")
        await table.command("Ann", "endgame")
        final = await table.next_board()
        assert "was stopped: nobody wins." in final.message.text
        game_over.set()
        toast = await table.client.wait_for_toast(callback_query_id=query_id)
        assert toast.text == "The game ended before the race was decided: nobody wins it."


async def flip_after_race(table: Table) -> str:
    """The text of the board that shows the flip made after Cid won the race."""
    board = await table.next_board()
    if "Cid wins the Snap" in board.message.text and " flips " not in board.message.text:
        board = await table.next_board()  # the race and the flip came as two boards
    return board.message.text


async def test_a_flip_pressed_while_a_race_collects_acts_once_it_is_decided(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob", "Cid"], admins=["Ann"]
    ) as table:
        await table.command("Ann", "settings", "tie_window 2000")
        await table.wait_for_text("Saved.")
        await table.open_and_start(["Ann", "Bob", "Cid"])
        board = await flip_until_match(table, await table.latest_board())
        assert board.turn is not None
        snap = await table.client.press(
            table.chat_id, board.message.message_id, table.players["Cid"], button_text="Snap!"
        )
        await table.client.wait_for(lambda: calls_stored(table.database_url), what="the call")
        # The race is collecting: Flip on the board it is about.
        flip = await table.press(board.turn, board.message, "Flip")
        assert flip.text == ""
        snap_toast = await table.client.wait_for_toast(callback_query_id=snap)
        assert snap_toast.text == "⚡ You won the race!"
        assert f"{board.turn} flips" in await flip_after_race(table)


async def test_a_flip_pressed_during_a_race_but_handled_after_it_still_acts(
    emulator: RunningEmulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Flip is stamped while the race collects, and its handler runs once it is decided."""
    real_flip = PlayService.flip
    held: dict[str, Any] = {}

    async def flip_after_the_snap_is_answered(self: PlayService, *args: Any) -> Any:
        if "snap" in held:
            snap_query, client = held.pop("snap")
            await client.wait_for_toast(callback_query_id=snap_query)
        return await real_flip(self, *args)

    monkeypatch.setattr(PlayService, "flip", flip_after_the_snap_is_answered)
    async with table_with(
        emulator, database_file(tmp_path), ["Ann", "Bob", "Cid"], admins=["Ann"]
    ) as table:
        await table.command("Ann", "settings", "tie_window 2000")
        await table.wait_for_text("Saved.")
        await table.open_and_start(["Ann", "Bob", "Cid"])
        board = await flip_until_match(table, await table.latest_board())
        assert board.turn is not None
        snap = await table.client.press(
            table.chat_id, board.message.message_id, table.players["Cid"], button_text="Snap!"
        )
        await table.client.wait_for(lambda: calls_stored(table.database_url), what="the call")
        held["snap"] = (snap, table.client)
        flip = await table.press(board.turn, board.message, "Flip")
        assert "snap" not in held, "the flip was handled after the race was decided"
        assert flip.text == ""
        assert f"{board.turn} flips" in await flip_after_race(table)


async def test_a_race_whose_worker_stopped_before_deciding_it_is_decided_by_the_next_flip(
    emulator: RunningEmulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker that took the only call never decides its race (as if it had stopped)."""
    monkeypatch.setattr(RaceReferee, "call_joined", lambda *args, **kwargs: None)
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob", "Cid"]) as table:
        await table.open_and_start(["Ann", "Bob", "Cid"])
        board = await flip_until_match(table, await table.latest_board())
        assert board.turn is not None
        await table.client.press(
            table.chat_id, board.message.message_id, table.players["Cid"], button_text="Snap!"
        )
        await table.client.wait_for(lambda: calls_stored(table.database_url), what="the call")
        flip = await table.press(board.turn, board.message, "Flip")
        assert flip.text == ""
        assert f"{board.turn} flips" in await flip_after_race(table)


async def test_a_race_nobody_decides_is_swept_and_its_board_shown_with_no_further_press(
    emulator: RunningEmulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race's deciding task is lost (as when its worker is killed): nobody presses again."""
    monkeypatch.setattr(RaceReferee, "call_joined", lambda *args, **kwargs: None)
    async with table_with(emulator, database_file(tmp_path), ["Ann", "Bob", "Cid"]) as table:
        await table.open_and_start(["Ann", "Bob", "Cid"])
        board = await flip_until_match(table, await table.latest_board())
        await table.client.press(
            table.chat_id, board.message.message_id, table.players["Cid"], button_text="Snap!"
        )
        after = await table.next_board()
        assert "Cid wins the Snap" in after.message.text
