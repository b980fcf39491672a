"""Players who play as fast as the bot lets them, and what the database says afterwards.

A driver plays one chat: it reads the newest board, presses Snap! when it shows
a match and otherwise has the player whose turn it is press Flip, then waits
for a newer board before pressing again. So every press it makes is valid when
made (unless a board was on its way already), and a press after which no board
comes is a stall.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import text

from telesnap.emulator.client import EmulatorClient, EmulatorTimeoutError
from telesnap.emulator.records import TranscriptMessage
from telesnap.game.engine import Game
from telesnap.game.operations import operation_from_json
from telesnap.services.stats.audit import check_game, stored_game
from telesnap.storage.database import create_engine, session_factory
from telesnap.storage.uow import UnitOfWork
from tests.e2e.harness import Board, Table, read_board

FLIP = "f"
SNAP = "s"
FINISHED = ("final standings", "was stopped")
FLIP_EVENT = re.compile(
    r"^(?P<name>\S+) (?:turns their pile over and )?flips (?:\d+ cards?: )?(?P<cards>.+)$"
)


@dataclass(frozen=True)
class Remote:
    """What :class:`tests.e2e.harness.Table` uses of a running emulator: its client."""

    client: EmulatorClient


async def open_table(
    client: EmulatorClient, database_url: str, names: list[str], *, admins: Sequence[str] = ()
) -> Table:
    """A group with ``names`` as members, served by whatever bot runs against ``client``."""
    players = {name: int((await client.create_user(name))["id"]) for name in names}
    chat = await client.create_chat(
        "group",
        title="Snap club",
        members=list(players.values()),
        admins=[players[name] for name in admins],
    )
    return Table(Remote(client), database_url, int(chat["id"]), players)  # type: ignore[arg-type]


@dataclass(frozen=True)
class PressMade:
    """One press a driver made."""

    chat_id: int
    query_id: str
    action: str
    board_message_id: int


@dataclass
class PlayLog:
    """The presses made and the stalls met by every driver of a run."""

    presses: list[PressMade] = field(default_factory=list)
    stalls: list[str] = field(default_factory=list)


def _button_data(message: TranscriptMessage, action: str) -> str | None:
    for row in message.buttons:
        for button in row:
            data = str(button.get("callback_data", ""))
            if data.startswith(f"{action}:"):
                return data
    return None


async def _board_after(table: Table, message_id: int, timeout_s: float) -> Board:
    """The newest board (or final message) of the chat, once one is newer than ``message_id``."""

    async def newest() -> TranscriptMessage | None:
        for message in reversed(await table.client.transcript(table.chat_id)):
            if message.deleted or not ("face-down" in message.text or _is_final(message)):
                continue
            return message if message.message_id > message_id else None
        return None

    found: TranscriptMessage = await table.client.wait_for(
        newest, timeout=timeout_s, what=f"a board after message {message_id}"
    )
    return read_board(found)


def _is_final(message: TranscriptMessage) -> bool:
    return any(marker in message.text for marker in FINISHED)


async def play_fast(
    table: Table,
    stop: asyncio.Event,
    log: PlayLog,
    *,
    seed: int,
    press_timeout_s: float = 30.0,
) -> None:
    """Play the table's running game until ``stop`` is set (or the game ends).

    Before returning it waits for the effect of its last press, so that once every
    driver has returned, every press has had its effect (or was logged as a stall).
    """
    rng = random.Random(seed)
    board = await table.latest_board()
    while not stop.is_set() and not _is_final(board.message):
        action = SNAP if board.has_match else FLIP
        player = rng.choice(sorted(board.tops)) if action == SNAP else board.turn
        data = _button_data(board.message, action)
        if player is None or data is None or player not in table.players:
            log.stalls.append(
                f"chat {table.chat_id}: no {action} to press on {board.message.text!r}"
            )
            return
        try:
            query_id = await table.client.press(
                table.chat_id, board.message.message_id, table.players[player], data=data
            )
        except ValueError as error:
            if "has no callback button" not in str(error):
                raise
            # The board lost its buttons as it was read (a newer one went out: the one
            # shown again after a restart, say): a player presses the newest instead.
            board = await table.latest_board()
            continue
        log.presses.append(PressMade(table.chat_id, query_id, action, board.message.message_id))
        try:
            board = await _board_after(table, board.message.message_id, press_timeout_s)
        except EmulatorTimeoutError:
            log.stalls.append(
                f"chat {table.chat_id}: no board within {press_timeout_s} s after {action} "
                f"on message {board.message.message_id}"
            )
            board = await table.latest_board()


@dataclass
class StoredHistory:
    """One game as the database holds it."""

    game_id: int
    chat_id: int
    names: dict[int, str]
    operations: list[tuple[str, dict[str, Any], int | None]]
    problems: list[str]
    cards: int


async def stored_histories(database_url: str) -> list[StoredHistory]:
    """Every started game: its operations, replay problems and the cards it holds."""
    engine = create_engine(database_url)
    try:
        async with UnitOfWork(session_factory(engine), read_only=True) as uow:
            session = uow.session
            rows = (await session.execute(text("SELECT id FROM games ORDER BY id"))).all()
            histories = []
            for (game_id,) in rows:
                game_row = await uow.games.get(game_id, lock=False)
                assert game_row is not None
                stored = await stored_game(uow, game_row)
                if not stored.operations:
                    continue  # a lobby
                names = dict(
                    (
                        await session.execute(
                            text(
                                "SELECT p.seat, u.first_name FROM game_players p "
                                "JOIN users u ON u.id = p.user_id WHERE p.game_id = :g"
                            ),
                            {"g": game_id},
                        )
                    ).all()
                )
                operations = [
                    (kind, payload if isinstance(payload, dict) else json.loads(payload), update_id)
                    for kind, payload, update_id in (
                        await session.execute(
                            text(
                                "SELECT kind, payload, update_id FROM game_operations "
                                "WHERE game_id = :g ORDER BY seq"
                            ),
                            {"g": game_id},
                        )
                    ).all()
                ]
                game = Game.replay([operation_from_json(payload) for _, payload, _ in operations])
                cards = sum(seat.card_count for seat in game.seats) + len(game.pot)
                histories.append(
                    StoredHistory(
                        game_id, game_row.chat_id, names, operations, check_game(stored), cards
                    )
                )
            return histories
    finally:
        await engine.dispose()


def flips_shown(messages: list[TranscriptMessage]) -> list[tuple[str, str]]:
    """Every (player, card) flip that the chat's messages announce, in message order."""
    shown = []
    for message in messages:
        for line in message.text.splitlines():
            if found := FLIP_EVENT.match(line.strip()):
                shown += [(found["name"], card) for card in found["cards"].split()]
    return shown


def flips_stored(history: StoredHistory) -> list[tuple[str, str]]:
    """Every (player, card) flip of a game's history, in order."""
    return [
        (history.names[payload["seat"]], str(payload["card"]))
        for kind, payload, _ in history.operations
        if kind == "card_flipped"
    ]


def first_not_shown(wanted: list[Any], seen: list[Any]) -> int | None:
    """The index of the first item of ``wanted`` not found, in order, in ``seen`` (None: all are).

    Others may come between, and an item may be seen twice (a board sent again).

    >>> first_not_shown([1, 3], [1, 2, 3]), first_not_shown([3, 1], [1, 2, 3])
    (None, 1)
    """
    rest = iter(seen)
    for index, item in enumerate(wanted):
        if not any(item == other for other in rest):
            return index
    return None


async def exactly_once_problems(
    client: EmulatorClient, log: PlayLog, histories: list[StoredHistory]
) -> list[str]:
    """Every press lost (neither applied nor answered), and every update applied twice.

    A press may be refused (its answer says why): after a restart the bot posts the
    table again, and a press on it can meet a board that was on its way already.
    """
    problems = []
    update_of = {}
    for record in await client.updates():
        query = record.payload.get("callback_query")
        if query is not None:
            update_of[query["id"]] = record
    applied: Counter[tuple[int | None, str]] = Counter(
        (update_id, kind)
        for history in histories
        for kind, _, update_id in history.operations
        if kind in ("card_flipped", "snap_called")
    )
    for (update_id, kind), count in applied.items():
        if update_id is not None and count > 1:
            problems.append(f"update {update_id}: {kind} applied {count} times")
    toasts = {toast.callback_query_id: toast for toast in await client.toasts()}
    for press in log.presses:
        record = update_of.get(press.query_id)
        if record is None or not record.confirmed:
            problems.append(f"press {press}: its update was never confirmed")
            continue
        kind = "card_flipped" if press.action == FLIP else "snap_called"
        count = applied[(record.update_id, kind)]
        toast = toasts.get(press.query_id)
        answer = toast.text if toast is not None and toast.is_answered else None
        what = f"update {record.update_id} ({press.action} in chat {press.chat_id})"
        if count == 0 and answer is None:
            problems.append(f"{what}: lost, neither applied nor answered")
        elif count == 0 and press.action == FLIP and not answer:
            problems.append(f"{what}: answered as flipped, but no flip is stored")
    return problems
    return problems


async def history_problems(client: EmulatorClient, histories: list[StoredHistory]) -> list[str]:
    """Games that do not replay, do not hold 52 cards, or whose flips were not all shown."""
    problems = []
    for history in histories:
        problems += [f"game {history.game_id}: {p}" for p in history.problems]
        if history.cards != 52:
            problems.append(f"game {history.game_id}: {history.cards} cards")
        shown = flips_shown(await client.transcript(history.chat_id))
        stored = flips_stored(history)
        missing = first_not_shown(stored, shown)
        if missing is not None:
            problems.append(
                f"game {history.game_id}: flip {missing + 1} of {len(stored)} "
                f"({stored[missing]}) was never shown after the ones before it"
            )
    return problems
