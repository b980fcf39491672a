"""Reading and changing a chat's settings (changes by chat admins only)."""

from __future__ import annotations

from .base import Service
from .settings import SETTING_NAMES, GameSettings, parse_setting
from .types import Actor, Place, Reason, Refused


class SettingsService(Service):
    """A chat topic's game settings: everyone may look, admins may change."""

    async def show(self, place: Place) -> GameSettings:
        """The settings the next game in the topic will play by."""
        async with self._change(place, None) as uow:
            values = await uow.settings.get_effective_values(place.chat_id, place.thread_id)
            return GameSettings.from_values(values)

    async def change(
        self, place: Place, actor: Actor, name: str, text: str, *, is_admin: bool
    ) -> GameSettings:
        """Set one setting by its public name; a running game keeps the settings it has."""
        if not is_admin:
            raise Refused(Reason.NOT_ADMIN)
        field = SETTING_NAMES.get(name.strip().lower())
        if field is None:
            raise Refused(Reason.UNKNOWN_SETTING, {"name": name})
        value = parse_setting(field, text)
        async with self._change(place, None) as uow:
            await self._remember_people(uow, place, actor)
            stored = await uow.settings.get_values(place.chat_id, 0)
            stored[field] = value
            await uow.settings.save_values(place.chat_id, 0, stored)
            values = await uow.settings.get_effective_values(place.chat_id, place.thread_id)
            return GameSettings.from_values(values)
