"""The settings service's rules, on an in-memory unit of work (no database)."""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import Any, Self

import pytest

from telesnap.services.chat_settings import SettingsService, adopt_language
from telesnap.services.play.store import GameStore
from telesnap.services.types import Actor, Place, Reason, Refused

from ..admin import known_admin

PLACE = Place(chat_id=-7, chat_type="supergroup", title="Forum", thread_id=5, is_forum=True)
ADA = Actor(1, "Ada")


class _Settings:
    def __init__(self, stored: dict[tuple[int, int], dict[str, Any]]) -> None:
        self._stored = stored

    async def get_values(self, chat_id: int, thread_id: int = 0) -> dict[str, Any]:
        return dict(self._stored.get((chat_id, thread_id), {}))

    async def values_to_change(self, chat_id: int, thread_id: int = 0) -> dict[str, Any]:
        return await self.get_values(chat_id, thread_id)

    async def get_effective_values(self, chat_id: int, thread_id: int) -> dict[str, Any]:
        values = await self.get_values(chat_id, 0)
        if thread_id:
            values.update(await self.get_values(chat_id, thread_id))
        return values

    async def save_values(self, chat_id: int, thread_id: int, values: dict[str, Any]) -> None:
        self._stored[(chat_id, thread_id)] = dict(values)


class _Upserts:
    async def upsert(self, *args: Any) -> None:
        pass


class _Updates:
    async def mark_update_processed(self, update_id: int) -> bool:
        return True


class FakeUnits:
    """Units of work over dicts: what a unit stores is kept only if it commits."""

    def __init__(self) -> None:
        self.committed: dict[tuple[int, int], dict[str, Any]] = {}
        self.opened = 0

    def __call__(self, *, read_only: bool = False) -> _FakeUnitOfWork:
        self.opened += 1
        return _FakeUnitOfWork(self)


class _FakeUnitOfWork:
    def __init__(self, units: FakeUnits) -> None:
        self._units = units
        self._pending = {key: dict(values) for key, values in units.committed.items()}
        self.settings = _Settings(self._pending)
        self.chats = self.users = _Upserts()
        self.updates = _Updates()
        self._after_commit: list[Callable[[], None]] = []

    def after_commit(self, callback: Callable[[], None]) -> None:
        self._after_commit.append(callback)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self._units.committed = self._pending
            for callback in self._after_commit:
                callback()


async def test_only_an_admin_changes_a_setting_and_a_refusal_opens_no_transaction() -> None:
    units = FakeUnits()
    service = SettingsService(units, GameStore())
    with pytest.raises(Refused) as refused:
        await service.change(PLACE, ADA, "tie_window", "250", is_admin=known_admin(False))
    assert refused.value.reason is Reason.NOT_ADMIN
    assert units.opened == 0


async def test_a_bad_value_is_refused_and_the_chat_keeps_its_settings() -> None:
    units = FakeUnits()
    service = SettingsService(units, GameStore())
    await service.change(PLACE, ADA, "tie_window", "250", is_admin=known_admin(True))
    with pytest.raises(Refused) as refused:
        await service.change(PLACE, ADA, "tie_window", "2001", is_admin=known_admin(True))
    assert refused.value.reason is Reason.BAD_SETTING_VALUE
    assert (await service.show(PLACE)).tie_window_ms == 250


async def test_a_topic_plays_by_its_chats_settings() -> None:
    units = FakeUnits()
    service = SettingsService(units, GameStore())
    changed = await service.change(PLACE, ADA, "tie_window", "300", is_admin=known_admin(True))
    assert changed.tie_window_ms == 300
    assert units.committed == {(PLACE.chat_id, 0): {"tie_window_ms": 300}}
    other_topic = Place(chat_id=PLACE.chat_id, chat_type="supergroup", thread_id=9)
    assert (await service.show(other_topic)).tie_window_ms == 300


async def test_the_first_language_adopted_stays() -> None:
    units = FakeUnits()
    service = SettingsService(units, GameStore())
    async with units() as uow:
        assert await adopt_language(uow, PLACE, "sw") == "sw"  # type: ignore[arg-type]
    async with units() as uow:
        assert await adopt_language(uow, PLACE, "th") == "sw"  # type: ignore[arg-type]
        assert await adopt_language(uow, PLACE, None) == "sw"  # type: ignore[arg-type]
    assert (await service.show(PLACE)).language == "sw"


async def test_the_admin_check_is_asked_once_before_any_transaction() -> None:
    units = FakeUnits()
    service = SettingsService(units, GameStore())
    asked: list[int] = []

    async def is_admin() -> bool:
        asked.append(units.opened)
        return True

    await service.change(PLACE, ADA, "tie_window", "250", is_admin=is_admin)
    assert asked == [0], "asked once, before the change's unit of work was opened"
    assert units.committed == {(PLACE.chat_id, 0): {"tie_window_ms": 250}}
