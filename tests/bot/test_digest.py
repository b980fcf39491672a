"""Every event is in some board message, however many pile up behind the flood limits."""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import cast

import pytest
from telegram.error import BadRequest

from telesnap.bot.delivery.live import RecentLines
from telesnap.bot.delivery.show import HeadNotShownError, HeadShow
from telesnap.bot.render.boards import BOARD_NAME_LIMIT, MAX_TEXT
from telesnap.bot.render.callbacks import CallbackSigner
from telesnap.bot.render.digest import BoardEvent, board_events, summarised
from telesnap.bot.render.i18n import translator
from telesnap.bot.render.names import shorten
from telesnap.emulator.formatting import parse_html, utf16_length
from telesnap.game import CallKind, CardFlipped, Game, Operation, standard_deck
from telesnap.services.outbox.rows import BoardEntry, Notice, NoticeKind
from telesnap.services.outbox.service import Line, OutboxService
from telesnap.services.views import PlayOutcome, TableView

from .sending import FakeBotApi

SIGNER = CallbackSigner.for_token("1:test")
TR = translator("en")
NAMES = ["Ann", "Bartholomew-Maximilian-Jones", "Cid"]  # the long one is shortened on boards
FLIP_LINE = re.compile(r"^(?P<name>\S+) (?:turns their pile over and )?flips (?P<card>\S+)$")
SUMMARY_LINE = re.compile(r"^(?P<name>\S+) flips \d+ cards?: (?P<cards>.+)$")


def play(
    seed: int, actions: int, names: list[str] = NAMES
) -> list[tuple[list[Operation], TableView]]:
    """A fast game: flips, snaps on matches, a wrong call now and then; each action's ops."""
    rng = random.Random(seed)
    game = Game()
    deck = standard_deck()
    rng.shuffle(deck)
    game.deal(len(names), dealer=0, deck=deck)
    steps: list[tuple[list[Operation], TableView]] = []
    users = [100 + seat for seat in range(len(names))]
    for _ in range(actions):
        if game.is_over:
            break
        before = len(game.history)
        callers = [
            s for s in range(len(names)) if game.can_call(s, game.board_version, CallKind.SNAP)
        ]
        if game.is_call_correct(CallKind.SNAP) and callers:
            game.call(
                rng.choice(callers),
                CallKind.SNAP,
                stamp_ns=before,
                sequence=before,
                seen_version=game.board_version,
            )
            game.resolve_race(0)
        elif callers and rng.random() < 0.08:
            game.call(
                rng.choice(callers),
                CallKind.SNAP,
                stamp_ns=before,
                sequence=before,
                seen_version=game.board_version,
            )
        else:
            game.flip(game.turn)
        table = TableView.of(1, game, users, names)
        steps.append((list(game.history[before:]), table))
    return steps


async def held_back_boards(steps: list[tuple[list[Operation], TableView]]) -> list[str]:
    """The board messages the chat's sender makes of rows none of which could go out meanwhile."""
    entries = [
        BoardEntry(row_id, -1, 0, 1, PlayOutcome(table, tuple(operations)))
        for row_id, (operations, table) in enumerate(steps, start=1)
    ]
    bot = FakeBotApi()
    show = HeadShow(bot, cast(OutboxService, None), SIGNER, RecentLines())  # type: ignore[arg-type]
    while entries:
        showing = await show.show(entries, Line(list(entries)), TR)
        entries = [entry for entry in entries if entry.id not in showing.shown.entry_ids]
    return [call.text for call in bot.calls]


def shown_flips(texts: list[str]) -> Counter[tuple[str, str]]:
    shown: Counter[tuple[str, str]] = Counter()
    for text in texts:
        for line in re.sub(r"<[^>]+>", "", text).splitlines():
            if found := SUMMARY_LINE.match(line):
                shown.update((found["name"], card) for card in found["cards"].split())
            elif found := FLIP_LINE.match(line):
                shown[(found["name"], found["card"])] += 1
    return shown


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_every_flip_and_every_other_event_is_shown_within_telegrams_limit(seed: int) -> None:
    steps = play(seed, actions=900)
    texts = await held_back_boards(steps)
    assert all(utf16_length(parse_html(text)[0]) <= MAX_TEXT for text in texts)
    assert not any("earlier event" in text for text in texts)
    flipped = Counter(
        (shorten(NAMES[op.seat], BOARD_NAME_LIMIT), str(op.card))
        for operations, _ in steps
        for op in operations
        if isinstance(op, CardFlipped)
    )
    assert shown_flips(texts) == flipped
    others = [
        line
        for operations, table in steps
        for event in board_events(operations, table, TR)
        if event.flip is None
        for line in [event.line]
    ]
    assert others, "the game had snaps and wrong calls"
    joined = "\n".join(texts)
    assert all(line in joined for line in others)
    assert len(texts) < len(steps) / 10, "held boards are merged, not sent one by one"


async def test_a_board_that_fits_shows_each_event_on_its_own_line() -> None:
    steps = play(4, actions=6)
    (text,) = await held_back_boards(steps)
    events = [
        event.line for operations, table in steps for event in board_events(operations, table, TR)
    ]
    assert text.split("\n")[: len(events)] == events


def test_the_summary_is_plural_aware_in_each_language() -> None:
    ((operations, table),) = play(5, actions=1)
    one = [BoardEvent("a note"), *board_events(operations, table, TR)]
    assert len(one) == 2
    assert one[1].flip is not None
    for language, singular, plural in [
        ("en", "flips 1 card:", "flips 2 cards:"),
        ("es", "voltea 1 carta:", "voltea 2 cartas:"),
        ("mk", "превртува 1 карта:", "превртува 2 карти:"),
    ]:
        tr = translator(language)
        assert singular in summarised([one[1]], tr)[0]
        assert plural in summarised([one[1], one[1]], tr)[0]


async def test_a_message_refused_names_only_the_rows_it_would_have_shown() -> None:
    steps = play(3, actions=900)  # three messages' worth of events
    entries = [
        BoardEntry(row_id, -1, 0, 1, PlayOutcome(table, tuple(operations)))
        for row_id, (operations, table) in enumerate(steps, start=1)
    ]
    bot = FakeBotApi(errors=[("send_message", BadRequest("Bad Request: can't parse entities"))])
    show = HeadShow(bot, cast(OutboxService, None), SIGNER, RecentLines())  # type: ignore[arg-type]
    with pytest.raises(HeadNotShownError) as refused:
        await show.show(entries, Line(list(entries)), TR)
    taken = refused.value.entry_ids
    assert 0 < len(taken) < len(entries), "the rows that did not fit are not set aside with it"
    assert taken == [entry.id for entry in entries[: len(taken)]]
    assert isinstance(refused.value.error, BadRequest)


async def test_a_restart_whose_rows_end_the_game_does_not_say_the_game_goes_on() -> None:
    """A time limit ran out while the bot was down: "I am back" would contradict the end."""
    game = Game()
    game.deal(2, dealer=0, deck=standard_deck())
    game.flip(game.turn)
    running = TableView.of(1, game, [100, 101], NAMES[:2])
    before = len(game.history)
    game.end_by_limit()
    ended = TableView.of(1, game, [100, 101], NAMES[:2])
    resumed = BoardEntry(1, -1, 0, 1, PlayOutcome(running, ()), (Notice(NoticeKind.RESUMED),))
    end = BoardEntry(2, -1, 0, 1, PlayOutcome(ended, tuple(game.history[before:])))
    bot = FakeBotApi()
    show = HeadShow(bot, cast(OutboxService, None), SIGNER, RecentLines())  # type: ignore[arg-type]
    await show.show([resumed, end], Line([resumed, end]), TR)
    (text,) = [call.text for call in bot.calls if call.text]
    assert "I am back" not in text
    assert "final standings" in text
    alone = FakeBotApi()
    show = HeadShow(alone, cast(OutboxService, None), SIGNER, RecentLines())  # type: ignore[arg-type]
    await show.show([resumed], Line([resumed]), TR)
    assert "I am back: the game goes on." in alone.calls[0].text, "said while the game goes on"
