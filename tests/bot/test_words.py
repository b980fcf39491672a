"""Words: plural forms in every message and language, isolation marks, long names, /settings."""

from __future__ import annotations

import gettext
import re
import unicodedata
from collections.abc import Callable
from dataclasses import replace

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po

from telesnap.bot.render.boards import (
    BOARD_NAME_LIMIT,
    compose_board,
    describe,
    render_final,
    render_table,
)
from telesnap.bot.render.history import render_game_line, render_history
from telesnap.bot.render.i18n import FSI, LANGUAGES, LOCALE_DIR, LRI, PDI, RLM, translator
from telesnap.bot.render.lobby import render_lobby
from telesnap.bot.render.settings_menu import settings_text, value_label
from telesnap.bot.render.stats import (
    render_leaderboard,
    render_player_stats,
)
from telesnap.bot.render.texts import refusal_text, verdict_toast, wrong_call_toast
from telesnap.game import (
    CallKind,
    CallResult,
    CallVerdict,
    CardFlipped,
    EndReason,
    GameEnded,
    GameStarted,
    LeaveReason,
    RaceResolved,
    SeatStatus,
    SnapCalled,
)
from telesnap.game.cards import parse_card, standard_deck
from telesnap.services.settings import SPEC_BY_NAME, SPECS, GameSettings
from telesnap.services.stats.standings import FastestCall, FinalView, StandingRow
from telesnap.services.stats.views import (
    BoardEntry,
    Figures,
    GameLine,
    HistoryPage,
    LeaderboardView,
    PlayerStatsView,
    Ranking,
)
from telesnap.services.types import Reason, Refused
from telesnap.services.views import LobbyView, PlayerView, TableView

from .test_i18n import PLURAL_RULES

COUNTS = (0, 1, 2, 5, 11, 21)
MARKS = re.compile(f"[{FSI}{PDI}{RLM}]")
TAGS = re.compile(r"<[^>]+>")


def _plain(text: str) -> str:
    return TAGS.sub("", MARKS.sub("", text))


def _catalog(language: str) -> Catalog:
    with (LOCALE_DIR / language / "LC_MESSAGES" / "telesnap.po").open("rb") as file:
        return read_po(file, locale=language)


def _form(language: str, singular: str, plural: str, count: int) -> str:
    """The form the catalog's plural rule picks for ``count`` (English: the code's own)."""
    if language == "en":
        return (singular if count == 1 else plural).replace("{count}", str(count))
    message = _catalog(language).get(singular)
    assert message is not None, (language, singular)
    forms = list(message.string)
    return forms[PLURAL_RULES[language][1](count)].replace("{count}", str(count))


def _player(seat: int, name: str, **changes: object) -> PlayerView:
    player = PlayerView(
        seat=seat,
        user_id=100 + seat,
        name=name,
        top=parse_card("10♥"),
        face_down=12,
        face_up=3,
        status=SeatStatus.ACTIVE,
        is_turn=seat == 0,
    )
    return replace(player, **changes)  # type: ignore[arg-type]


def _table(*players: PlayerView, pot: int = 0, final: FinalView | None = None) -> TableView:
    return TableView(
        game_id=42,
        board_version=3,
        players=players,
        pot_top=parse_card("7♣") if pot else None,
        pot_size=pot,
        flips=20,
        is_race_open=False,
        winners=(0,) if final else None,
        end_reason=final.reason if final else None,
        final=final,
    )


def _final(count: int, names: tuple[str, ...] = ("Ann", "Bob")) -> FinalView:
    rows = tuple(
        StandingRow(
            seat=seat,
            name=name,
            place=seat + 1,
            cards=count,
            snaps_won=count,
            wrong_calls=count,
            status=SeatStatus.ACTIVE,
            left_reason=None,
            is_winner=seat == 0,
        )
        for seat, name in enumerate(names)
    )
    return FinalView(EndReason.LIMIT, rows, FastestCall(names[0], count))


def _figures(count: int) -> Figures:
    return Figures(
        games=count or 1,  # a player with no game shows no figures
        rated_games=count,
        wins=count,
        rating=3.5,
        mu=25.0,
        sigma=7.0,
        snaps_won=count,
        pots_won=count,
        ties=count,
        wrong_calls=count,
        cards_won=count,
        afks=count,
        timed_calls=count,
        median_reaction_ms=count,
        best_reaction_ms=count,
    )


def _leaderboard(ranking: Ranking, count: int, tr: gettext.NullTranslations) -> str:
    entry = BoardEntry(position=1, user_id=1, name="Ann", figures=_figures(count))
    view = LeaderboardView(
        chat_id=-1,
        is_global=False,
        ranking=ranking,
        entries=(entry,),
        min_games=count,
        min_timed_calls=count,
        unlisted=count,
    )
    return render_leaderboard(view, tr)


Render = Callable[[int, gettext.NullTranslations], str]
"""Renders a real message in which ``count`` is shown."""

ANN_BOB = (_player(0, "Ann"), _player(1, "Bob", is_turn=False))
PLURAL_MESSAGES: list[tuple[str, str, Render]] = [
    (
        "{count} face-down",
        "{count} face-down",
        lambda n, tr: render_table(_table(_player(0, "Ann", face_down=n)), tr),
    ),
    (
        "{count} face-up",
        "{count} face-up",
        lambda n, tr: render_table(_table(_player(0, "Ann", face_up=n)), tr),
    ),
    (
        "Snap Pot: {card} ({count} card)",
        "Snap Pot: {card} ({count} cards)",
        lambda n, tr: (
            render_table(_table(*ANN_BOB, pot=n), tr).replace("7♣", "{card}") if n else ""
        ),
    ),
    (
        "🃏 {dealer} deals {count} card; {first} flips first.",
        "🃏 {dealer} deals {count} cards; {first} flips first.",
        lambda n, tr: (
            (describe(GameStarted(2, 0, tuple(standard_deck()[:n])), _table(*ANN_BOB), tr) or "")
            .replace("Ann", "{dealer}")
            .replace("Bob", "{first}")
        ),
    ),
    (
        "⚡ {name} wins the Snap and takes {count} card!",
        "⚡ {name} wins the Snap and takes {count} cards!",
        lambda n, tr: (
            describe(
                RaceResolved(
                    CallKind.SNAP, (0,), (0, 1), False, n, (CallResult(0, CallVerdict.WON),)
                ),
                _table(*ANN_BOB),
                tr,
            )
            or ""
        ).replace("Ann", "{name}"),
    ),
    ("{count} card", "{count} cards", lambda n, tr: render_final(42, _final(n), tr)),
    ("{count} snap won", "{count} snaps won", lambda n, tr: render_final(42, _final(n), tr)),
    ("{count} wrong call", "{count} wrong calls", lambda n, tr: render_final(42, _final(n), tr)),
    ("{count} ms", "{count} ms", lambda n, tr: render_final(42, _final(n), tr)),
    ("{count} ms", "{count} ms", lambda n, tr: verdict_toast(CallVerdict.TOO_SLOW, n, tr)),
    (
        "{count} ms",
        "{count} ms",
        lambda n, tr: value_label(SPEC_BY_NAME["tie_window"], n, tr),
    ),
    (
        "{count} second",
        "{count} seconds",
        lambda n, tr: value_label(SPEC_BY_NAME["turn_timer"], n, tr) if n % 60 else "",
    ),
    (
        "{count} minute",
        "{count} minutes",
        lambda n, tr: value_label(SPEC_BY_NAME["lobby_expiry"], n, tr) if n % 60 else "",
    ),
    (
        "{count} game",
        "{count} games",
        lambda n, tr: render_player_stats(_stats(n), tr) if n else "",
    ),
    ("{count} win", "{count} wins", lambda n, tr: render_player_stats(_stats(n), tr)),
    (
        "{count} snap won",
        "{count} snaps won",
        lambda n, tr: render_player_stats(_stats(n), tr),
    ),
    (
        "{count} Snap Pot won",
        "{count} Snap Pots won",
        lambda n, tr: render_player_stats(_stats(n), tr),
    ),
    ("{count} tie", "{count} ties", lambda n, tr: render_player_stats(_stats(n), tr)),
    (
        "{count} wrong call",
        "{count} wrong calls",
        lambda n, tr: render_player_stats(_stats(n), tr),
    ),
    ("{count} card won", "{count} cards won", lambda n, tr: render_player_stats(_stats(n), tr)),
    (
        "{count} time away (AFK)",
        "{count} times away (AFK)",
        lambda n, tr: render_player_stats(_stats(n), tr),
    ),
    ("{count} ms", "{count} ms", lambda n, tr: render_player_stats(_stats(n), tr)),
    (
        "{count} rated game",
        "{count} rated games",
        lambda n, tr: _leaderboard(Ranking.RATING, n, tr),
    ),
    (
        "Listed after {count} rated game.",
        "Listed after {count} rated games.",
        lambda n, tr: _leaderboard(Ranking.WINS, n, tr),
    ),
    (
        "{count} call",
        "{count} calls",
        lambda n, tr: _leaderboard(Ranking.FASTEST, n, tr),
    ),
    (
        "Listed after {count} timed correct call.",
        "Listed after {count} timed correct calls.",
        lambda n, tr: _leaderboard(Ranking.FASTEST, n, tr),
    ),
    (
        "{count} more player is not listed yet.",
        "{count} more players are not listed yet.",
        lambda n, tr: _leaderboard(Ranking.SNAPS, n, tr) if n else "",
    ),
    (
        "{count} game",
        "{count} games",
        lambda n, tr: (
            render_history(HistoryPage(chat_id=-1, games=(), page=0, pages=1, total=n), tr)
            if n
            else ""
        ),
    ),
    (
        "The game is full ({count} player).",
        "The game is full ({count} players).",
        lambda n, tr: refusal_text(Refused(Reason.LOBBY_FULL, {"max": n}), tr),
    ),
    (
        "Snap needs at least {count} player.",
        "Snap needs at least {count} players.",
        lambda n, tr: refusal_text(Refused(Reason.TOO_FEW_PLAYERS, {"min": n}), tr),
    ),
]


def _stats(count: int) -> PlayerStatsView:
    return PlayerStatsView(
        user_id=1,
        name="Ann",
        chat=_figures(count),
        everywhere=None,
        reaction_counts=(),
        ratings=(),
        chat_ratings=(),
        min_games_to_plot=2,
    )


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize(
    ("singular", "plural", "render"),
    PLURAL_MESSAGES,
    ids=[f"{i}:{singular}" for i, (singular, _, _) in enumerate(PLURAL_MESSAGES)],
)
def test_every_count_takes_the_plural_form_of_the_language(
    language: str, singular: str, plural: str, render: Render
) -> None:
    tr = translator(language)
    for count in COUNTS:
        text = render(count, tr)
        if not text:
            continue  # that count cannot be shown by this message
        expected = _form(language, singular, plural, count)
        assert _plain(expected) in _plain(text), (language, count, text)


def test_english_says_one_win_not_one_wins() -> None:
    tr = translator("en")
    text = render_player_stats(_stats(1), tr)
    assert "1 game · 1 win (100%)" in text
    assert "1 snap won · 1 Snap Pot won · 1 tie · 1 wrong call" in text
    assert "1 card won" in text
    assert "1 time away (AFK)" in text
    assert "2 wins" in render_player_stats(_stats(2), tr)


COUNT_PLACEHOLDERS = re.compile(
    r"\{(count|down|up|max|min|ms|snaps|pots|ties|wrong|cards|afks|total|flips)\}"
)
"""Placeholders that take a bare number (``{games}`` or ``{wins}`` take a counted phrase)."""
NOT_A_COUNT = {
    # "Players (3/12):" is a fraction under a heading: no noun agrees with either number.
    "🃏 A game of Snap is starting! Players ({count}/{max}):",
}


def test_no_message_shows_a_count_without_plural_forms() -> None:
    with (LOCALE_DIR / "telesnap.pot").open("rb") as file:
        template = read_po(file)
    singular_with_count = [
        message.id
        for message in template
        if message.id
        and isinstance(message.id, str)
        and COUNT_PLACEHOLDERS.search(message.id)
        and message.id not in NOT_A_COUNT
    ]
    assert singular_with_count == []


# -- isolation marks -------------------------------------------------------------------

LTR_NAMES = {
    "es": ("Ana", "Bea", "Carlos"),
    "mk": ("Јован", "Марија", "Ана"),
    "sw": ("Amani", "Baraka", "Zawadi"),
    "th": ("สมชาย", "สมหญิง", "Ann"),
}


def _full_board(names: tuple[str, ...], tr: gettext.NullTranslations) -> str:
    players = tuple(_player(seat, name, is_turn=seat == 1) for seat, name in enumerate(names))
    table = _table(*players, pot=3)
    events = [
        describe(CardFlipped(0, parse_card("10♥"), False), table, tr) or "",
        describe(CardFlipped(2, parse_card("Q♠"), True), table, tr) or "",
    ]
    return compose_board(events, table, tr)


@pytest.mark.parametrize("language", sorted(LTR_NAMES))
def test_left_to_right_boards_with_left_to_right_names_carry_no_marks(language: str) -> None:
    tr = translator(language)
    names = LTR_NAMES[language]
    board = _full_board(names, tr)
    final = render_final(42, _final(3, names), tr)
    for text in (board, final):
        assert not {FSI, PDI, RLM} & set(text), text
    assert all(name in board for name in names)
    assert "10♥" in board


def test_an_arabic_name_in_a_spanish_board_is_isolated() -> None:
    tr = translator("es")
    board = _full_board(("Ana", "محمد", "Carlos"), tr)
    assert board.count(f"{FSI}محمد{PDI}") == board.count("محمد") == 2  # its line and Turn
    assert f"{FSI}Ana" not in board
    assert RLM not in board


def test_latin_names_and_cards_in_an_arabic_board_are_isolated() -> None:
    tr = translator("ar")
    board = _full_board(("Ana", "محمد", "Carlos"), tr)
    assert f"{FSI}Ana{PDI}" in board
    assert f"{FSI}10♥{PDI}" in board
    assert f"{FSI}محمد" not in board
    assert all(line.startswith(RLM) for line in board.splitlines() if line)


def test_a_name_holding_direction_controls_is_always_isolated() -> None:
    tr = translator("es")
    text = render_table(_table(_player(0, "Ann\u202eevil")), tr)
    assert f"{FSI}Ann\u202eevil{PDI}" in text


# -- long names ------------------------------------------------------------------------

LONG = "Alexandria Catherine Montgomery-Smythe"


def test_boards_shorten_long_names_and_the_turn_line_does_not_repeat_them() -> None:
    tr = translator("en")
    table = _table(_player(0, LONG), _player(1, "Bob", is_turn=False))
    text = render_table(table, tr)
    short = LONG[: BOARD_NAME_LIMIT - 1] + "…"
    assert text.splitlines()[0].startswith(f"▶ <b>{short}</b>: 10♥")
    assert LONG not in text
    assert text.count(short) == 1
    assert text.splitlines()[-1] == "Turn: the player marked ▶"
    event = describe(CardFlipped(0, parse_card("3♦"), False), table, tr)
    assert event == f"<b>{short}</b> flips 3♦"


def test_a_short_name_is_repeated_on_the_turn_line() -> None:
    tr = translator("en")
    text = render_table(_table(_player(0, "Ann"), _player(1, "Bob", is_turn=False)), tr)
    assert text.splitlines()[-1] == "Turn: <b>Ann</b>"


def test_the_lobby_and_the_final_message_show_long_names_whole() -> None:
    tr = translator("en")
    lobby = LobbyView(game_id=1, creator_id=1, players=((1, LONG), (2, "Bob")), status="lobby")
    assert f"• {LONG}" in render_lobby(lobby, tr)
    assert f"<b>{LONG}</b>" in render_final(42, _final(3, (LONG, "Bob")), tr)


def test_the_line_saying_who_won_shows_the_name_whole() -> None:
    tr = translator("en")
    table = _table(_player(0, LONG), _player(1, "Bob", is_turn=False))
    ended = GameEnded((0,), EndReason.LIMIT, (30, 22))
    assert describe(ended, table, tr) == f"🏆 <b>{LONG}</b> wins the game!"
    shared = describe(GameEnded((0, 1), EndReason.LIMIT, (26, 26)), table, tr)
    assert shared == f"🏆 <b>{LONG}</b> and <b>Bob</b> share the win: each wins the game!"


def test_two_who_share_a_win_are_named_as_two_in_arabic() -> None:
    """Arabic's verb takes the dual for two winners and the plural for three."""
    tr = translator("ar")
    names = ("Ann", "Bob", "Cid")
    table = _table(*(_player(seat, n, is_turn=not seat) for seat, n in enumerate(names)))
    two = describe(GameEnded((0, 1), EndReason.LIMIT, (26, 26, 0)), table, tr)
    three = describe(GameEnded((0, 1, 2), EndReason.LIMIT, (20, 20, 20)), table, tr)
    assert two is not None
    assert three is not None
    assert "يتقاسمان" in two
    assert "Bob" in two
    assert "يتقاسمون" in three
    assert "Cid" in three


def test_a_lobby_called_off_in_arabic_reads_right_to_left() -> None:
    lobby = LobbyView(game_id=1, creator_id=1, players=((1, "Ann"),), status="cancelled")
    assert render_lobby(lobby, translator("ar")).startswith(RLM)


def test_names_are_not_cut_inside_a_character() -> None:
    tr = translator("th")
    name = "นิ้" * 30  # a letter with a vowel and a tone mark above it, thirty times
    text = render_table(_table(_player(0, name)), tr)
    assert ("นิ้" * (BOARD_NAME_LIMIT - 1)) + "…" in text


@pytest.mark.parametrize(
    "letter",
    ["กำ", unicodedata.normalize("NFD", "김")],  # Thai with SARA AM; a Hangul syllable in jamo
)
def test_names_are_not_cut_inside_letters_of_any_script(letter: str) -> None:
    text = render_table(_table(_player(0, letter * 30)), translator("th"))
    assert (letter * (BOARD_NAME_LIMIT - 1)) + "…" in text


# -- the final message -----------------------------------------------------------------


def test_the_final_message_gives_standings_fastest_call_and_replay_number() -> None:
    tr = translator("en")
    final = FinalView(
        EndReason.ALL_CARDS,
        (
            StandingRow(0, "Ann", 1, 52, 4, 1, SeatStatus.ACTIVE, None, True),
            StandingRow(1, "Bob", 2, 0, 1, 0, SeatStatus.OUT, None, False),
        ),
        FastestCall("Bob", 287),
    )
    assert render_final(42, final, tr).splitlines() == [
        "🏁 <b>Game #42: final standings</b>",
        "Won by taking every card.",
        "1. 🏆 <b>Ann</b> — 52 cards · 4 snaps won · 1 wrong call",
        "2. <b>Bob</b> — out · 1 snap won · 0 wrong calls",
        "⚡ Fastest correct call: <b>Bob</b>, 287 ms",
        "/replay 42 sends the whole game, move by move.",
    ]


def test_a_game_won_because_the_others_left_says_so() -> None:
    """The last player in holds every card outside the pot only because the others' were
    shared out: "taking every card" would be untrue (and with a pot, plainly wrong)."""
    tr = translator("en")
    ann = StandingRow(0, "Ann", 1, 28, 0, 0, SeatStatus.ACTIVE, None, True)
    bob_left = StandingRow(1, "Bob", 2, 0, 0, 0, SeatStatus.LEFT, LeaveReason.LEFT, False)
    cid_away = StandingRow(2, "Cid", 3, 0, 0, 0, SeatStatus.LEFT, LeaveReason.AFK, False)
    cid_out = StandingRow(2, "Cid", 3, 0, 0, 0, SeatStatus.OUT, None, False)
    all_left = FinalView(EndReason.ALL_CARDS, (ann, bob_left, cid_away), None)
    assert render_final(5, all_left, tr).splitlines()[1] == (
        "Won because everyone else left the game."
    )
    some_out = FinalView(EndReason.ALL_CARDS, (ann, bob_left, cid_out), None)
    assert render_final(5, some_out, tr).splitlines()[1] == (
        "Won as the last player in: the others went out or left."
    )


def test_the_final_message_names_the_limit_that_ended_the_game() -> None:
    tr = translator("en")
    rows = (StandingRow(0, "Ann", 1, 30, 0, 0, SeatStatus.ACTIVE, None, True),)
    final = FinalView(EndReason.LIMIT, rows, None)
    by_flips = render_final(7, final, tr, flips=24, flip_limit=24).splitlines()
    assert by_flips[1] == "The flip limit (24 flips) was reached: the most cards wins."
    by_time = render_final(7, final, tr, flips=11, flip_limit=24).splitlines()
    assert by_time[1] == "The time limit was reached: the most cards wins."
    assert render_final(7, final, tr, flips=11).splitlines()[1] == by_time[1]
    stopped = render_final(7, FinalView(EndReason.ABANDONED, rows, None), tr).splitlines()
    assert stopped[0] == "🛑 <b>Game #7 was stopped</b>: nobody wins."


def test_an_ended_table_renders_as_the_final_standings() -> None:
    tr = translator("en")
    table = _table(*ANN_BOB, final=_final(2))
    assert render_table(table, tr) == render_final(42, _final(2), tr)


# -- /settings -------------------------------------------------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
def test_settings_show_only_allowed_values(language: str) -> None:
    tr = translator(language)
    text = settings_text(GameSettings(), tr)
    off = tr.gettext("off")
    for spec in SPECS:
        shown = value_label(spec, GameSettings().value_of(spec), tr)
        if not spec.optional and spec.kind != "switch":
            assert shown != off, spec.name
    language_line = next(line for line in text.splitlines() if "<code>language</code>" in line)
    assert tr.gettext("automatic (the first opener's)") in language_line
    assert f"<b>{off}</b>" not in language_line
    chosen = value_label(SPEC_BY_NAME["language"], "es", tr)
    assert chosen == "Español"


def test_what_is_typed_in_a_setting_line_reads_left_to_right_in_arabic() -> None:
    """Each line's "(match_mode: rank, rank_and_colour, suit)" broke apart where it wrapped."""
    lines = settings_text(GameSettings(), translator("ar")).splitlines()
    typed = [line for line in lines if "<code>match_mode</code>" in line]
    assert len(typed) == 1
    assert typed[0].endswith(f"{LRI}(<code>match_mode</code>: rank, rank_and_colour, suit){PDI}")
    english = settings_text(GameSettings(), translator("en"))
    assert LRI not in english, "a left-to-right line needs no isolate"


def test_players_who_walked_away_are_shown_as_such() -> None:
    tr = translator("en")
    rows = tuple(
        StandingRow(seat, name, seat + 1, 0, 0, 0, SeatStatus.LEFT, reason, False)
        for seat, (name, reason) in enumerate(
            [("Ann", LeaveReason.LEFT), ("Bob", LeaveReason.REMOVED), ("Cid", LeaveReason.AFK)]
        )
    )
    lines = render_final(7, FinalView(EndReason.LIMIT, rows, None), tr).splitlines()
    assert lines[2:5] == [
        "1. <b>Ann</b> — left · 0 snaps won · 0 wrong calls",
        "2. <b>Bob</b> — removed · 0 snaps won · 0 wrong calls",
        "3. <b>Cid</b> — removed as away · 0 snaps won · 0 wrong calls",
    ]
    assert "Fastest" not in "\n".join(lines)


def test_arabic_lists_of_names_are_separated_by_the_arabic_comma_and_and() -> None:
    tr = translator("ar")
    tie = RaceResolved(
        CallKind.SNAP,
        (0, 1),
        (0, 1),
        False,
        4,
        (CallResult(0, CallVerdict.TIED), CallResult(1, CallVerdict.TIED)),
    )
    game = GameLine(42, None, None, ("Ann", "Bob", "Cy"), ("Ann", "Bob"), "limit", 9, 20, True)
    listed = render_game_line(game, tr).replace("<b>", "").replace("</b>", "")
    assert f"Ann{PDI}، {FSI}Bob" in listed
    assert ", " not in listed
    tied = (describe(tie, _table(*ANN_BOB), tr) or "").replace("<b>", "").replace("</b>", "")
    assert f"Ann{PDI} و{FSI}Bob" in tied, "the last two are joined by Arabic's 'and'"
    assert "Ann, Bob, Cy" in render_game_line(game, translator("es"))


def test_a_lobby_closing_in_whole_hours_says_hours() -> None:
    lobby = LobbyView(
        game_id=1,
        creator_id=1,
        players=((1, "Ann"),),
        status="lobby",
        closes_at="2026-12-04T19:00:00+00:00",
        minutes_left=60,
    )
    assert "⏳ Closes in 1 hour (at 19:00 UTC)" in render_lobby(lobby, translator("en"))


def test_a_lobby_names_who_may_start_it() -> None:
    """The one who may press Start is named: a creator who left and came back is not it."""
    tr = translator("en")
    opened = LobbyView(game_id=1, creator_id=1, players=((1, "Ann"), (2, "Bob")), status="lobby")
    assert "Press Join to play. Ann (or an admin) presses Start." in render_lobby(opened, tr)
    handed_on = replace(opened, creator_id=2, players=((2, "Bob"), (1, "Ann")))
    assert "Bob (or an admin) presses Start." in render_lobby(handed_on, tr)
    escaped = replace(opened, players=((1, "<b>Ann</b>"),))
    assert "&lt;b&gt;Ann&lt;/b&gt; (or an admin) presses Start." in render_lobby(escaped, tr)


def test_a_game_ended_with_cards_in_the_pot_or_in_a_shared_win_says_how() -> None:
    """The pot's cards are nobody's (R20), and a tie that empties the last players shares the
    win (R21): neither is "taking every card"."""
    tr = translator("en")
    ann = StandingRow(0, "Ann", 1, 8, 3, 0, SeatStatus.ACTIVE, None, True)
    bob_out = StandingRow(1, "Bob", 2, 0, 1, 0, SeatStatus.OUT, None, False)
    with_pot = FinalView(EndReason.ALL_CARDS, (ann, bob_out), None, pot=44)
    assert render_final(5, with_pot, tr).splitlines()[1] == (
        "Won by taking every card outside the Snap Pot (44 cards stay in it)."
    )
    ann_out = StandingRow(0, "Ann", 1, 0, 0, 0, SeatStatus.OUT, None, True)
    bob_shares = StandingRow(1, "Bob", 1, 0, 0, 0, SeatStatus.OUT, None, True)
    shared = FinalView(EndReason.ALL_CARDS, (ann_out, bob_shares), None, pot=52)
    assert render_final(5, shared, tr).splitlines()[1] == (
        "Their last cards went into the Snap Pot together: they share the win."
    )


@pytest.mark.parametrize(
    ("kind", "toast", "line"),
    [
        (
            CallKind.SNAP,
            "❌ No two face-up cards match! That call costs you a card.",
            "❌ <b>Ann</b> called Snap!, but no two face-up cards match.",
        ),
        (
            CallKind.SNAP_POT,
            "❌ No face-up card matches the Snap Pot! That call costs you a card.",
            "❌ <b>Ann</b> called Snap Pot!, but no face-up card matches the Snap Pot.",
        ),
    ],
)
def test_a_wrong_call_says_what_its_kind_needed(kind: CallKind, toast: str, line: str) -> None:
    """Not "nothing matches" while the pot matches a card (a Snap! there is wrong, R10)."""
    tr = translator("en")
    assert wrong_call_toast(kind, True, tr) == toast
    assert wrong_call_toast(kind, False, tr) == toast.removesuffix(" That call costs you a card.")
    wrong = SnapCalled(0, kind, 0, 1, 3, CallVerdict.WRONG)
    assert describe(wrong, _table(_player(0, "Ann"), pot=3), tr) == line


def test_a_refused_manager_action_names_who_runs_the_game() -> None:
    tr = translator("en")
    named = Refused(Reason.NOT_CREATOR, {"name": "Bob & Co"})
    assert refusal_text(named, tr) == (
        "Only Bob &amp; Co, who runs this game, or a chat admin can do that."
    ), "escaped for a message (a toast takes the plain text)"
    assert refusal_text(Refused(Reason.NOT_CREATOR), tr) == (
        "Only the game's creator or a chat admin can do that."
    )


def test_a_refused_setting_value_reads_left_to_right_in_arabic() -> None:
    """The range "10-86400" inside an Arabic line would otherwise show as "86400-10"."""
    refused = Refused(Reason.BAD_SETTING_VALUE, {"name": "turn_timer", "allowed": "10-86400, off"})
    text = refusal_text(refused, translator("ar"))
    assert f"{FSI}turn_timer{PDI}" in text
    assert f"{FSI}10-86400, off{PDI}" in text
