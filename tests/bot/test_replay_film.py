"""The /replay film: one frame per move a board described, in every language, a bounded length."""

from __future__ import annotations

import io
import random

import pytest
from PIL import Image

from telesnap.bot.render.boards import describe
from telesnap.bot.render.i18n import translator
from telesnap.bot.render.replay_film import film_frames, legible, replay_film
from telesnap.game import CardFlipped, Game
from telesnap.services.privacy import FORMER_PLAYER
from telesnap.services.views import TableView
from telesnap.simulate import play_game

NAMES = ["Ann", "سارة", "สมชาย", "Бојан"]


@pytest.fixture(scope="module")
def long_game() -> Game:
    return play_game(random.Random(5), len(NAMES), 300, 400)


def test_each_frame_shows_the_line_its_board_said(long_game: Game) -> None:
    tr = translator("es")
    frames = film_frames(long_game.history, NAMES, tr)
    replayed = Game()
    said = []
    for op in long_game.history:
        replayed = Game.replay([*replayed.history, op])
        line = describe(op, TableView.of(0, replayed, [0] * len(NAMES), NAMES), tr)
        if line is not None:
            said.append(line)
    assert len(frames) == len(said)
    assert frames[-1].table.is_over
    assert "<b>" not in "".join(frame.event for frame in frames)


def test_a_long_game_plays_in_about_a_minute_and_a_half(long_game: Game) -> None:
    frames = film_frames(long_game.history, NAMES, translator("en"))
    flips = [frame for frame, op in zip(frames, _described(long_game), strict=True) if op]
    assert len(flips) > 300
    total_s = sum(frame.milliseconds for frame in frames) / 1000
    assert total_s <= 90 + 6  # the last frame stays a few seconds more
    assert frames[-1].milliseconds > max(frame.milliseconds for frame in frames[:-1])


@pytest.mark.parametrize("language", ["en", "mk", "sw", "es", "ar", "th"])
def test_the_film_is_a_looping_gif_of_every_frame(language: str) -> None:
    game = play_game(random.Random(11), 3, 300, 40)
    tr = translator(language)
    data = replay_film(3, game.history, NAMES[:3], tr)
    picture = Image.open(io.BytesIO(data))
    assert picture.format == "GIF"
    assert picture.info["loop"] == 0
    assert picture.n_frames == len(film_frames(game.history, NAMES[:3], tr))


def test_a_stopped_game_ends_on_a_frame_that_says_so() -> None:
    ended = play_game(random.Random(11), 2, 300, 6)  # ended by its flip limit
    game = Game.replay(ended.history[:-1])
    game.abandon()
    frames = film_frames(game.history, ["Ann", "Bob"], translator("es"))
    assert frames[-1].event == translator("es").gettext("🛑 stopped: nobody won")
    assert frames[-1].event != frames[-2].event


def test_a_history_without_moves_makes_no_film() -> None:
    assert replay_film(1, [], ["Ann", "Bob"], translator("en")) == b""


def test_a_former_player_is_named_in_the_films_language() -> None:
    game = play_game(random.Random(11), 2, 300, 20)
    tr = translator("es")
    erased = replay_film(3, game.history, [FORMER_PLAYER, "Bob"], tr)
    assert erased == replay_film(3, game.history, ["un exjugador", "Bob"], tr)


def _described(game: Game) -> list[bool]:
    """For each frame, whether it is a flip's."""
    frames_ops = []
    replayed = Game()
    for op in game.history:
        replayed = Game.replay([*replayed.history, op])
        table = TableView.of(0, replayed, [0] * len(NAMES), NAMES)
        if describe(op, table, translator("en")) is not None:
            frames_ops.append(isinstance(op, CardFlipped))
    return frames_ops


NO_FONT_HAS = "\U0010fffd"
"""A character of the last private-use plane: no font of the film draws it, as with an emoji."""


@pytest.mark.parametrize(
    ("line", "drawn"),
    [
        (f"{NO_FONT_HAS} Dan left the game.", "Dan left the game."),
        (f"Ann wins {NO_FONT_HAS}", "Ann wins"),
        (f"Ann {NO_FONT_HAS} and Bob", "Ann and Bob"),
        (f"Ann{NO_FONT_HAS} and Bob", "Ann and Bob"),
        ("telesnap  #3   ↻ 5", "telesnap  #3   ↻ 5"),
    ],
)
def test_a_character_the_fonts_lack_leaves_no_gap(line: str, drawn: str) -> None:
    """Left out, with the space that set it apart: a line never starts with a gap."""
    assert legible(line) == drawn


@pytest.mark.parametrize("language", ["ar", "en"])
def test_a_name_of_joined_emoji_beside_arabic_makes_a_film(language: str) -> None:
    """A zero-width joiner (👩‍💻) before a lam-alef once broke the Arabic shaping of the film."""
    game = play_game(random.Random(11), 3, 300, 40)
    names = ["👩\u200d💻 Dee", "علا", "👩\u200d👩\u200d👧\u200d👦🔥"]
    data = replay_film(3, game.history, names, translator(language))
    assert Image.open(io.BytesIO(data)).n_frames == len(
        film_frames(game.history, names, translator(language))
    )
