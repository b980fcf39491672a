"""Checking stored games and stats against their history.

A replay document's ``# stored:`` header line holds, as JSON, what the database says about
the game, so a document can be checked on its own.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...game import (
    EndReason,
    Game,
    GameEnded,
    Operation,
    SnapError,
    operation_from_json,
)
from ...storage.models import ALL_CHATS, GameOperation
from ...storage.models import Game as GameRow
from ...storage.uow import UnitOfWork
from .figures import Rating, initial_rating, rate_game, summarize_game

__all__ = [
    "DocumentError",
    "StoredGame",
    "check_game",
    "parse_document",
    "recompute_ratings",
    "stored_game",
    "write_document",
]

STORED_PREFIX = "# stored: "
NOT_A_DOCUMENT = "not a /replay document (cut short?)"


class DocumentError(ValueError):
    """A text that is not a replay document: why, and on which line (from 1) it shows."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason if line is None else f"line {line}: {reason}")
        self.reason = reason
        self.line = line


@dataclass(frozen=True, slots=True)
class StoredGame:
    """What the database says about a game, next to its operations."""

    facts: dict[str, Any]
    operations: tuple[tuple[int, str, dict[str, Any]], ...]


async def stored_game(uow: UnitOfWork, row: GameRow) -> StoredGame:
    """Collect a game's stored facts (row, players, result) and its history rows."""
    players = await uow.games.list_players(row.id)
    history: list[GameOperation] = await uow.history.load(row.id)
    facts: dict[str, Any] = {
        "game_id": row.id,
        "chat_id": row.chat_id,
        "thread_id": row.thread_id,
        "status": row.status,
        "end_reason": row.end_reason,
        "winner_ids": list(row.winner_ids or []),
        "user_ids": [player.user_id for player in players],
        "started_at": row.started_at.isoformat() if row.started_at else None,
        "ended_at": row.ended_at.isoformat() if row.ended_at else None,
    }
    result = await uow.stats.game_result(row.id)
    if result is not None:
        facts["flips"] = result.flips
        facts["operations"] = result.operations
        facts["rated"] = result.rated
        facts["places"] = [p.place for p in await uow.stats.player_results(row.id)]
    operations = tuple((op.seq, op.kind, dict(op.payload)) for op in history)
    return StoredGame(facts, operations)


def write_document(stored: StoredGame, header: Sequence[str] = ()) -> str:
    """The replay document: ``#`` header lines, then one operation a line."""
    lines = [f"# {line}" for line in header]
    lines.append(STORED_PREFIX + json.dumps(stored.facts, ensure_ascii=False, sort_keys=True))
    lines.append("# seq\tkind\toperation")
    for seq, kind, payload in stored.operations:
        lines.append(f"{seq}\t{kind}\t{json.dumps(payload, ensure_ascii=False)}")
    return "\n".join(lines) + "\n"


def parse_document(text: str) -> StoredGame:
    """Read a replay document back; raise :class:`DocumentError` for a line that is not one."""
    facts: dict[str, Any] | None = None
    operations = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith(STORED_PREFIX):
            facts = _json_object(line[len(STORED_PREFIX) :], number)
        elif line.startswith("#") or not line.strip():
            continue
        else:
            parts = line.split("\t", 2)
            if len(parts) != 3 or not parts[0].isdigit():
                raise DocumentError("not 'seq<TAB>kind<TAB>json'", number)
            operations.append((int(parts[0]), parts[1], _json_object(parts[2], number)))
    if facts is None:
        raise DocumentError("no '# stored:' line: not a /replay document")
    return StoredGame(facts, tuple(operations))


def _json_object(text: str, number: int) -> dict[str, Any]:
    """Line ``number``'s JSON object (a line cut short is no JSON at all)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise DocumentError(NOT_A_DOCUMENT, number) from None
    if not isinstance(value, dict):
        raise DocumentError("the JSON is not an object", number)
    return value


def check_game(stored: StoredGame) -> list[str]:
    """Rebuild the game from its operations; every way it differs from the stored facts."""
    problems = []
    history: list[Operation] = []
    for expected, (seq, kind, payload) in enumerate(stored.operations, start=1):
        if seq != expected:
            problems.append(f"operation {expected} is numbered {seq}")
        if payload.get("kind") != kind:
            problems.append(f"operation {seq}: kind {kind} but the JSON says {payload.get('kind')}")
        try:
            history.append(operation_from_json(payload))
        except SnapError as error:
            return [*problems, f"operation {seq}: {error}"]
    try:
        game = Game.replay(history)
    except SnapError as error:
        return [*problems, f"the history does not replay: {error}"]
    problems += _ending_problems(game)
    facts = stored.facts
    for key, value in _rebuilt_facts(game, list(facts.get("user_ids", []))).items():
        if key in facts and facts[key] != value:
            problems.append(f"{key}: stored {facts[key]!r}, rebuilt {value!r}")
    return problems


def _ending_problems(game: Game) -> list[str]:
    """What a game's last operation says about its end that its cards contradict."""
    end = game.history[-1] if game.history else None
    if not isinstance(end, GameEnded):
        return []
    problems = []
    counts = game.card_counts()
    if end.card_counts != counts:
        problems.append(f"game_ended says the cards held are {end.card_counts}, not {counts}")
    active = game.active_seats()
    if end.reason is EndReason.LIMIT and active:
        best = max(counts[seat] for seat in active)
        expected = tuple(seat for seat in active if counts[seat] == best)
        if end.winners != expected:
            problems.append(f"game_ended names winners {end.winners}, not {expected}")
    elif end.reason is EndReason.ABANDONED and end.winners:
        problems.append("an abandoned game has winners")
    return problems


def _rebuilt_facts(game: Game, user_ids: list[int]) -> dict[str, Any]:
    if not game.is_started:
        return {}
    rebuilt: dict[str, Any] = {"operations": len(game.history)}
    if len(user_ids) != len(game.seats):
        rebuilt["user_ids"] = f"{len(game.seats)} seats"
        return rebuilt
    if game.outcome is None:
        rebuilt["status"] = "running"
        return rebuilt
    summary = summarize_game(game.history)
    rebuilt.update(
        status="finished" if summary.counted else "abandoned",
        end_reason=summary.reason.value,
        winner_ids=[user_ids[seat] for seat in summary.winners],
        flips=summary.flips,
        rated=summary.rated,
        places=list(summary.places),
    )
    return rebuilt


async def recompute_ratings(uow: UnitOfWork) -> dict[tuple[int, int], Rating]:
    """Every ``(scope_id, user_id)``'s rating, recomputed from the histories in end order."""
    ratings: dict[tuple[int, int], Rating] = {}
    for result in await uow.stats.results_in_end_order():
        history = await uow.history.operations(result.game_id)
        summary = summarize_game([stored.operation for stored in history])
        if not summary.rated:
            continue
        players = await uow.games.list_players(result.game_id)
        user_ids = [player.user_id for player in players]
        for scope in (result.chat_id, ALL_CHATS):
            keys = [(scope, user) for user in user_ids]
            before = [ratings.get(key, initial_rating()) for key in keys]
            ratings.update(zip(keys, rate_game(before, summary.places), strict=True))
    return ratings
