"""Erasing data through the emulator: /forgetme and /forgetchat, each after its button."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

from telesnap.emulator.records import TranscriptMessage
from telesnap.emulator.testing import RunningEmulator
from telesnap.emulator.users import Press
from telesnap.services.housekeeping import KEEP_PAYLOADS, HousekeepingService
from telesnap.storage.database import create_engine, session_factory
from telesnap.storage.models import Chat
from telesnap.storage.uow import UnitsOfWork

from .harness import Table, database_file, table_with
from .name_cells import cells_holding
from .stats_helpers import short_games_played


async def tidied_after_the_grace(url: str) -> Counter[str]:
    """Run the housekeeping as it runs ten minutes on; count the cells naming her then."""
    engine = create_engine(url)
    try:
        later = datetime.now(UTC) + KEEP_PAYLOADS + timedelta(seconds=1)
        await HousekeepingService(UnitsOfWork(session_factory(engine))).tidy(later)
    finally:
        await engine.dispose()
    return await cells_holding(url, "Annabel")


async def test_forgetme_erases_a_players_name_everywhere_after_their_own_button(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    url = database_file(tmp_path)
    async with table_with(emulator, url, ["Annabel", "Bob"], admins=["Annabel"]) as table:
        await short_games_played(table, ["Annabel", "Bob"], snapper="Bob", games=2)
        before = await cells_holding(url, "Annabel")
        print(f"\ncells holding the player's first name after two games: {sum(before.values())}")
        print(dict(before))
        grace = await tidied_after_the_grace(url)
        print(f"once their content's grace has passed: {sum(grace.values())} {dict(grace)}")
        assert "inbox.payload" not in grace, "handled updates keep no names past the grace"

        asked = await table.command("Annabel", "forgetme")
        question = await table.reply_to(asked)
        assert "Only you can press the button." in question.text
        toast = await table.press("Bob", question, "Erase my data")
        assert toast.text == "Only the person who asked can press this."
        await table.press("Annabel", question, "Erase my data")
        answer = await table.wait_for_text("Your data is erased:")
        assert answer.message_id == question.message_id, "the question becomes the answer"
        assert "2 past games now show you as “a former player”;" in answer.text

        await table.command("Bob", "history")
        history = await table.wait_for_text("Games played here")
        assert "a former player, Bob" in history.text
        assert "Annabel" not in history.text
        await table.command("Bob", "leaderboard")
        board = await table.wait_for_text("eaderboard: Rating")  # provisional after 2 games
        assert "Annabel" not in board.text
    after = await cells_holding(url, "Annabel")
    print(f"after /forgetme: {sum(after.values())} {dict(after)}")
    assert after == {}, "no cell of the database holds her name any more"


async def test_forgetme_in_a_private_chat_with_the_bot(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    url = database_file(tmp_path)
    async with table_with(emulator, url, ["Carla", "Dan"]) as table:
        client = table.client
        private = int((await client.create_chat("private", members=[table.players["Carla"]]))["id"])
        await client.send_command(private, table.players["Carla"], "forgetme")
        question = await client.wait_for_message(
            private, lambda m: "Erase my data" in str(m.buttons)
        )
        query = await client.press(
            private, question.message_id, table.players["Carla"], button_text="Erase my data"
        )
        await client.wait_for_toast(callback_query_id=query)
        await client.wait_for_message(private, lambda m: "Your data is erased:" in m.text)
    assert await cells_holding(url, "Carla") == {}


async def test_forgetchat_erases_the_chats_games_after_an_admins_button(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    url = database_file(tmp_path)
    async with table_with(emulator, url, ["Eve", "Finn"], admins=["Eve"]) as table:
        await short_games_played(table, ["Eve", "Finn"], snapper="Finn")

        refused = await table.command("Finn", "forgetchat")
        assert "Only the chat's admins can erase its data." in (await table.reply_to(refused)).text
        asked = await table.command("Eve", "forgetchat")
        question = await table.reply_to(asked)
        toast = await table.press("Finn", question, "Erase this chat's data")
        assert toast.text == "Only the chat's admins can erase its data."
        await table.press("Eve", question, "Erase this chat's data")
        answer = await table.wait_for_text("This chat's data is erased")
        assert "1 game" in answer.text

        await table.command("Finn", "history")
        await table.wait_for_text("No game has ended in this chat yet")
        shown = await table.command("Finn", "settings")
        settings = await table.client.wait_for_message(
            table.chat_id, lambda m: m.message_id > shown and "Settings" in m.text
        )
        assert "Flip limit: off" in settings.text, "the chat's settings are the defaults again"

        board = await table.open_and_start(["Eve", "Finn"])
        assert set(board.tops) == {"Eve", "Finn"}, "a new game plays as in a new chat"
        again = await table.reply_to(await table.command("Eve", "forgetchat"))
        await table.press("Eve", again, "Erase this chat's data")
        await table.wait_for_text("A game is still on here: end it with /endgame, then ask again.")
        asked = await table.command("Finn", "forgetme")
        await table.press("Finn", await table.reply_to(asked), "Erase my data")
        await table.wait_for_text("You are in a game that is still on")


async def removed_at(url: str, chat_id: int) -> datetime | None:
    engine = create_engine(url)
    try:
        async with session_factory(engine)() as session:
            chat = await session.get(Chat, chat_id)
            return None if chat is None else chat.removed_at
    finally:
        await engine.dispose()


async def test_a_group_that_removes_the_bot_is_erased_after_thirty_days(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    url = database_file(tmp_path)
    async with table_with(emulator, url, ["Gus", "Hana"], admins=["Gus"]) as table:
        await short_games_played(table, ["Gus", "Hana"], snapper="Hana")
        assert table.runner is not None
        assert table.runner.runtime is not None
        await table.client.wait_until_idle()
        await table.runner.runtime.settle()  # the ended game's buttons are off
        await table.client.kick_bot(table.chat_id)

        async def recorded() -> datetime | None:
            return await removed_at(url, table.chat_id)

        removal = await table.client.wait_for(recorded, what="the removal stored")
    units_engine = create_engine(url)
    try:
        housekeeping = HousekeepingService(UnitsOfWork(session_factory(units_engine)))
        assert (await housekeeping.tidy(removal + timedelta(days=29))).purged_chats == 0
        assert (await housekeeping.tidy(removal + timedelta(days=30))).purged_chats == 1
    finally:
        await units_engine.dispose()
    assert await cells_holding(url, "Gus") == {"users.first_name": 1}, "only his user row"


async def ann_asks_to_be_forgotten_after_a_game(table: Table) -> TranscriptMessage:
    """Ann and Bob play one short game; Ann sends /forgetme: its question."""
    await short_games_played(table, ["Ann", "Bob"], snapper="Bob")
    return await table.reply_to(await table.command("Ann", "forgetme"))


async def test_a_double_tap_on_erase_keeps_the_first_taps_answer(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    url = database_file(tmp_path)
    async with table_with(emulator, url, ["Ann", "Bob"], admins=["Ann"]) as table:
        question = await ann_asks_to_be_forgotten_after_a_game(table)
        taps = [
            Press(
                table.chat_id, question.message_id, table.players["Ann"], None, "Erase my data", t
            )
            for t in (0.0, 0.02)
        ]
        first, second = await table.client.press_many(taps)
        await table.client.wait_until_idle()
        answer = next(m for m in await table.messages() if m.message_id == question.message_id)
        assert "1 past game now shows you as “a former player”;" in answer.text, answer.text
        toasts = {toast.callback_query_id: toast for toast in await table.client.toasts()}
        assert toasts[first].is_answered
        assert toasts[second].text == "This button is not valid."


async def test_past_games_keep_the_former_player_when_they_play_again(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    """The README: if you play again, your name is kept from then on, not on your past seats."""
    url = database_file(tmp_path)
    async with table_with(emulator, url, ["Ann", "Bob"], admins=["Ann"]) as table:
        question = await ann_asks_to_be_forgotten_after_a_game(table)
        await table.press("Ann", question, "Erase my data")
        await table.wait_for_text("Your data is erased:")
        await table.command("Ann", "newgame")  # she plays again: her name is kept again
        await table.wait_for_text("A game of Snap is starting")
        history = await table.reply_to(await table.command("Bob", "history"))
        assert "a former player, Bob" in history.text
        assert "Ann" not in history.text


async def test_pressing_someone_elses_erase_button_again_and_again_is_turned_away(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    """Each refused press counts against its sender's refusals, as a refused command does: a
    member tapping another's question for ever gets the gate's answer, not the handler's."""
    async with table_with(emulator, database_file(tmp_path), ["Annabel", "Bob"]) as table:
        question = await table.reply_to(await table.command("Annabel", "forgetme"))
        toasts = [(await table.press("Bob", question, "Erase my data")).text for _ in range(9)]
    assert toasts[:8] == ["Only the person who asked can press this."] * 8
    assert toasts[8] == (
        "⏳ Too many of your actions were refused: wait a few seconds, then try again."
    ), "she is told why, not that she pressed too often"
