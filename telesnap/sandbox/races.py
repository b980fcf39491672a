"""The race timeline: each race's calls as the bot stamped them, read from the game's history.

A race starts with the first correct call (``SnapCalled`` with verdict
``pending``) and ends with its ``RaceResolved``. Each call is placed by its
receipt stamp (the wall-clock reading taken when its update entered the bot),
relative to the race's first call; the tie window is the game's setting.
Wrong calls made while the race was open, and the calls that came after it
was decided (too slow, too late) until the next flip, are shown too.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from ..game import (
    CallVerdict,
    CardFlipped,
    GameEnded,
    RaceResolved,
    SnapCalled,
    TurnSkipped,
    operation_from_json,
)
from ..game.errors import SnapError
from ..services.settings import GameSettings
from ..services.types import display_name
from ..storage.models import Game, GameOperation, GamePlayer
from ..storage.models.accounts import User

RACES_SHOWN = 20


@dataclass
class TimelineCall:
    """One call of a race."""

    seat: int
    user_id: int | None
    name: str
    offset_ms: float
    """Its receipt stamp minus the race's first stamp."""
    verdict: str
    """What it was told: ``won``, ``tied``, ``too_slow``, ``too_late`` or ``wrong``."""
    behind_ms: int | None


@dataclass
class Race:
    """One race, decided or still open."""

    game_id: int
    chat_id: int
    thread_id: int
    call: str
    """``snap`` or ``snap_pot``."""
    tie_window_ms: int
    calls: list[TimelineCall] = field(default_factory=list)
    outcome: str = "open"
    """``won``, ``tied`` (the piles went into the pot) or ``open``."""
    winners: list[str] = field(default_factory=list)
    cards: int = 0

    @property
    def summary(self) -> str:
        """One line for people: what was called and how it ended.

        >>> Race(1, -1, 0, "snap_pot", 100, outcome="won", winners=["Ann"], cards=9).summary
        'Snap Pot! Ann won 9 cards'
        """
        called = "Snap Pot!" if self.call == "snap_pot" else "Snap!"
        if self.outcome == "tied":
            return f"{called} A tie: {', '.join(self.winners)}; the piles go into the Snap Pot"
        if self.outcome == "won":
            return f"{called} {', '.join(self.winners)} won {self.cards} cards"
        return f"{called} Deciding…"

    def to_json(self) -> dict[str, Any]:
        """The race as the page reads it (with its ``summary``)."""
        return {**asdict(self), "summary": self.summary}


async def recent_races(
    sessions: async_sessionmaker[AsyncSession], chat_id: int, thread_id: int | None = None
) -> list[Race]:
    """The latest races of the chat's (or topic's) latest games, oldest first."""
    async with sessions() as session:
        query = select(Game).where(Game.chat_id == chat_id).order_by(Game.id.desc()).limit(3)
        if thread_id is not None:
            query = query.where(Game.thread_id == thread_id)
        games = list((await session.scalars(query)).all())
        races: list[Race] = []
        for game in reversed(games):
            races.extend(await _races_of(session, game))
    return races[-RACES_SHOWN:]


async def _races_of(session: AsyncSession, game: Game) -> list[Race]:
    seats = await session.execute(
        select(GamePlayer.seat, GamePlayer.user_id, User.first_name, User.last_name)
        .join(User, User.id == GamePlayer.user_id)
        .where(GamePlayer.game_id == game.id)
    )
    names = {seat: (user_id, display_name(first, last)) for seat, user_id, first, last in seats}
    tie_window = GameSettings.from_values(game.settings or {}).tie_window_ms
    rows = await session.scalars(
        select(GameOperation).where(GameOperation.game_id == game.id).order_by(GameOperation.seq)
    )
    races: list[Race] = []
    race: Race | None = None
    decided: Race | None = None  # the race just decided, for calls that come after it
    first_stamp = 0
    for row in rows:
        try:
            operation = operation_from_json(row.payload)
        except SnapError:
            continue  # a history this build cannot read shows no timeline, not an error
        if isinstance(operation, SnapCalled):
            opens = race is None and operation.verdict is CallVerdict.PENDING
            if opens:
                race = Race(game.id, game.chat_id, game.thread_id, operation.call.value, tie_window)
                races.append(race)
                first_stamp = operation.stamp_ns
                decided = None
            shown_in = race or decided
            if shown_in is None:
                continue
            user_id, name = names.get(operation.seat, (None, f"seat {operation.seat}"))
            shown_in.calls.append(
                TimelineCall(
                    operation.seat,
                    user_id,
                    name,
                    (operation.stamp_ns - first_stamp) / 1_000_000,
                    operation.verdict.value,
                    operation.behind_ms,
                )
            )
        elif isinstance(operation, RaceResolved) and race is not None:
            _close(race, operation, names)
            race, decided = None, race
        elif isinstance(operation, CardFlipped | TurnSkipped | GameEnded):
            decided = None
    return races


def _close(race: Race, resolved: RaceResolved, names: dict[int, tuple[int, str]]) -> None:
    results = {result.seat: result for result in resolved.results}
    for call in race.calls:
        result = results.get(call.seat)
        if result is not None and call.verdict == CallVerdict.PENDING.value:
            call.verdict = result.verdict.value
            call.behind_ms = result.behind_ms
    tied = any(result.verdict is CallVerdict.TIED for result in resolved.results)
    race.outcome = "tied" if tied else "won"
    race.winners = [names.get(seat, (0, f"seat {seat}"))[1] for seat in resolved.winners]
    race.cards = resolved.cards
