"""The end of a game as players see it: the standings, the fastest call, the game's number.

A player with a very long name plays too: boards cut the name (and the Turn line
does not repeat it), the lobby and the final message show it whole.
"""

from __future__ import annotations

import re
from pathlib import Path

from telesnap.bot.render.boards import BOARD_NAME_LIMIT
from telesnap.emulator.records import TranscriptMessage
from telesnap.emulator.testing import RunningEmulator

from .harness import Table, database_file, table_with

LONG = "Alexandria Catherine Montgomery-Smythe"
SHORT = LONG[: BOARD_NAME_LIMIT - 1] + "…"
NAMES = ["Ann", "Bob", LONG]
PLAYER = re.compile(r"^(?P<turn>▶ )?(?P<name>.+?): (?P<top>\S+) · \d+ face-down · \d+ face-up$")


def _read(message: TranscriptMessage) -> tuple[dict[str, str], str | None]:
    """The face-up tops by (full) player name, and whose turn it is."""
    tops: dict[str, str] = {}
    turn = None
    for line in message.text.splitlines():
        if found := PLAYER.match(line):
            name = LONG if found["name"] == SHORT else found["name"]
            tops[name] = found["top"]
            if found["turn"]:
                turn = name
    return tops, turn


def _has_match(tops: dict[str, str]) -> bool:
    ranks = [top[:-1] for top in tops.values() if top != "—"]
    return len(ranks) != len(set(ranks))


async def _next(table: Table) -> TranscriptMessage:
    return (await table.next_board()).message


async def test_the_final_message_gives_standings_fastest_call_and_replay_number(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    async with table_with(emulator, database_file(tmp_path), NAMES, admins=["Ann"]) as table:
        await table.command("Ann", "settings", "flip_limit 24")
        await table.wait_for_text("Saved.")
        await table.command("Ann", "newgame")
        lobby = await table.wait_for_text("A game of Snap is starting")
        for other in NAMES[1:]:
            await table.press(other, lobby, "Join")
        lobby = await table.wait_for_text(LONG)  # the lobby shows the long name whole
        await table.press("Ann", lobby, "Start")
        message = await _next(table)
        correct_calls = wrong_calls = 0
        saw_long_turn = False
        for _ in range(200):
            tops, turn = _read(message)
            if turn is None:
                break
            assert LONG not in message.text
            assert SHORT in message.text
            if turn == LONG:
                saw_long_turn = True
                assert "Turn: the player marked ▶" in message.text
            if _has_match(tops):
                toast = await table.press("Bob", message, "Snap!")
                correct_calls += "won the race" in toast.text
            elif wrong_calls == 0 and len(tops) == 3 and "—" not in tops.values():
                toast = await table.press("Ann", message, "Snap!")
                assert "No two face-up cards match" in toast.text
                wrong_calls += 1
            else:
                toast = await table.press(turn, message, "Flip")
                assert toast.text == ""
            message = await _next(table)
        assert saw_long_turn
        assert correct_calls >= 1
        assert wrong_calls == 1
        final = message.text
        assert message.reply_markup is None
        number = re.search(r"Game #(\d+): final standings", final)
        assert number is not None, final
        lines = final.splitlines()
        assert "The flip limit (24 flips) was reached: the most cards wins." in lines
        standings = [line for line in lines if re.match(r"^\d\. ", line)]
        assert len(standings) == 3
        assert any(line.startswith("1. 🏆 ") for line in standings)
        for name in NAMES:
            (line,) = [line for line in standings if f" {name} — " in line]
            assert re.search(r"— \d+ cards? · \d+ snaps? won · \d+ wrong calls?$", line), line
        (ann,) = [line for line in standings if " Ann — " in line]
        assert ann.endswith("· 1 wrong call")
        fastest = re.search(r"⚡ Fastest correct call: Bob, (\d+) ms", final)
        assert fastest is not None, final
        assert lines[-1] == f"/replay {number[1]} sends the whole game, move by move."
        await table.command("Ann", "replay", f"{number[1]} file")
        document = await table.client.wait_for_message(
            table.chat_id, lambda m: m.kind == "document"
        )
        assert document.text.startswith(f"#{number[1]} · ")
        assert LONG in document.text
