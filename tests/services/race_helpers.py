"""Deciding races in service tests, as the bot's referee does when a tie window closes."""

from __future__ import annotations

from telesnap.services.play.races import RaceService
from telesnap.services.types import Place
from telesnap.services.views import RaceOutcome


async def decide_open_race(races: RaceService, place: Place) -> RaceOutcome | None:
    """Decide the topic's open race; None when it has none."""
    for race in await races.open_races():
        if (race.place.chat_id, race.place.thread_id) == (place.chat_id, place.thread_id):
            return await races.decide(place, race.race_id)
    return None
