"""Names as long as Telegram allows never make a board, a finish or a history page too long.

Telegram counts a message's length in UTF-16 units of the text it shows (HTML parsed), so
these names are long where it counts: letters outside the BMP (two units each), characters
HTML escapes (five times longer in the markup), and emoji joined into one character.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import cast

import pytest

from telesnap.bot.delivery.live import LIVE, RecentLines
from telesnap.bot.delivery.show import HeadShow
from telesnap.bot.render.boards import compose_board
from telesnap.bot.render.digest import board_events, board_lines
from telesnap.bot.render.history import render_history
from telesnap.bot.render.i18n import translator
from telesnap.emulator.formatting import parse_html, utf16_length
from telesnap.game import Game, Operation, standard_deck
from telesnap.services.outbox.rows import BoardEntry
from telesnap.services.outbox.service import Line, OutboxService
from telesnap.services.stats.views import GameLine, HistoryPage
from telesnap.services.views import PlayOutcome, TableView

from .sending import FakeBotApi
from .test_digest import SIGNER, held_back_boards, play

TR = translator("en")
PLAYERS = 12
FAMILY = "👨\u200d👩\u200d👧\u200d👦"  # one character, eleven UTF-16 units


def _names(first: str, last: str) -> list[str]:
    """Twelve full names of a 64-character first name and a 64-character last name."""
    return [f"{first * 63}{chr(ord('A') + seat)} {last * 64}" for seat in range(PLAYERS)]


ASTRAL = _names("𝐀", "𝐚")
ESCAPED = _names("&", "<")
FAMILIES = [f"{FAMILY * 9}{chr(ord('A') + seat)} {FAMILY * 9}" for seat in range(PLAYERS)]
LONG_NAMES = {"astral": ASTRAL, "escaped": ESCAPED, "families": FAMILIES}


def shown(markup: str) -> str:
    """The text a chat shows for ``markup``, parsed as Telegram does."""
    return parse_html(markup)[0]


def finish(names: list[str]) -> str:
    """The last board of a game that twelve players ended at a flip limit of 10."""
    game = Game()
    game.deal(PLAYERS, dealer=0, deck=standard_deck())
    for _ in range(10):
        game.flip(game.turn)
    before = len(game.history)
    game.end_by_limit()
    table = TableView.of(1, game, list(range(100, 100 + PLAYERS)), names, {0: 300}, flip_limit=10)
    operations = list(game.history[before - 1 :])  # the last flip, and the end
    return compose_board(board_lines(board_events(operations, table, TR), table, TR), table, TR)


@pytest.mark.parametrize("kind", sorted(LONG_NAMES))
def test_the_finish_fits_and_opens_with_the_event_that_ended_the_game(kind: str) -> None:
    text = shown(finish(LONG_NAMES[kind]))
    assert utf16_length(text) <= 4096
    lines = text.splitlines()
    assert "earlier event" not in text
    assert "flips" in lines[0]
    assert "wins the game!" in lines[1]
    assert lines[3].startswith("🏁 Game #1: final standings")
    assert sum(line[:3].rstrip(". ").isdigit() for line in lines) == PLAYERS, "every place"


@pytest.mark.parametrize("kind", sorted(LONG_NAMES))
async def test_merged_boards_fit_telegrams_limit(kind: str) -> None:
    texts = await held_back_boards(play(1, actions=300, names=LONG_NAMES[kind]))
    assert len(texts) > 1
    assert max(utf16_length(shown(text)) for text in texts) <= 4096


def _game_line(game_id: int, names: list[str]) -> GameLine:
    return GameLine(
        game_id=game_id,
        started_at=datetime(2026, 12, 1, 10, 0, tzinfo=UTC),
        ended_at=datetime(2026, 12, 1, 10, 5, tzinfo=UTC),
        players=tuple(names),
        winners=(names[game_id % PLAYERS],),
        end_reason="limit",
        flips=10,
        operations=30,
        rated=True,
    )


@pytest.mark.parametrize("kind", [*sorted(LONG_NAMES), "latin"])
def test_a_history_page_of_long_named_games_fits_telegrams_limit(kind: str) -> None:
    names = LONG_NAMES.get(kind) or _names("A", "b")
    games = tuple(_game_line(game_id, names) for game_id in range(9, 4, -1))
    page = HistoryPage(chat_id=-1, games=games, page=0, pages=2, total=10)
    text = shown(render_history(page, TR))
    assert utf16_length(text) <= 4096
    assert text.startswith("📜 Games played here · page 1 of 2 (10 games)")
    assert all(f"#{game_id} · 2026-12-01 10:05 UTC" in text for game_id in range(5, 10))
    assert text.endswith("/replay ID sends a game's whole history.")


@pytest.mark.parametrize("kind", sorted(LONG_NAMES))
async def test_a_live_board_never_counts_lines_it_showed_as_left_out(kind: str) -> None:
    steps = [
        (operations, dataclasses.replace(table, board_style=LIVE))
        for operations, table in play(2, actions=40, names=LONG_NAMES[kind])
    ]
    texts = await boards_shown_one_by_one(steps)
    assert len(texts) == len(steps)
    assert max(utf16_length(shown(text)) for text in texts) <= 4096
    assert not [text for text in texts if "earlier event" in text]


async def boards_shown_one_by_one(steps: list[tuple[list[Operation], TableView]]) -> list[str]:
    """The texts a chat's sender shows of each row as it comes, editing a live board in place."""
    bot = FakeBotApi()
    show = HeadShow(bot, cast(OutboxService, None), SIGNER, RecentLines())  # type: ignore[arg-type]
    line = Line([])
    for row_id, (operations, table) in enumerate(steps, start=1):
        entry = BoardEntry(row_id, -1, 0, 1, PlayOutcome(table, tuple(operations)))
        showing = await show.show([entry], line, TR)
        assert showing.shown.board is not None
        line.shown[table.game_id] = showing.shown.board
    return [call.text for call in bot.calls if call.text]
