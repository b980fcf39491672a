"""Erasing what the bot keeps about one person, or about one chat.

A person's past games stay, since the other players' results and histories need them, but
every stored trace of their name goes, payloads included. A chat's erasure deletes its games
(the rest goes with them by cascade), its figures, its settings and the chat row.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    ColumnElement,
    CursorResult,
    String,
    Table,
    and_,
    delete,
    func,
    null,
    or_,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession

from ..models import (
    ACTIVE_STATUSES,
    WHOLE_CHAT,
    Chat,
    ChatSettings,
    Game,
    GamePlayer,
    GamePlayerResult,
    GameResult,
    InboxUpdate,
    OutboxMessage,
    OutboxSender,
    PlayerStats,
    ReactionCount,
    Timer,
    User,
)

__all__ = ["PURGE_KEY", "Erased", "PrivacyRepository", "scrub"]

_INBOX: Table = cast("Table", InboxUpdate.__table__)
_SCAN = 500
"""Rows read per query while looking for a person's name in stored payloads."""


def scrub(value: Any, user_id: int, names: frozenset[str], placeholder: str) -> Any:
    """``value`` (a JSON payload) with every trace of the person replaced by ``placeholder``.

    Views with their id are renamed, a ``name`` in ``names`` replaced where no ``user_id`` says
    whose it is, their user object cut to its id. Only names: every row is scrubbed, and a name
    may be any word ("active", "messages"), or another person's too.

    >>> scrub({"players": [[7, "Ann"], [8, "Bob"]], "fastest": {"name": "Ann"}, "status": "Ann"},
    ...       7, frozenset({"Ann"}), "-")
    {'players': [[7, '-'], [8, 'Bob']], 'fastest': {'name': '-'}, 'status': 'Ann'}
    >>> scrub({"user_id": 9, "name": "Ann"}, 7, frozenset({"Ann"}), "-")  # another Ann
    {'user_id': 9, 'name': 'Ann'}
    """
    if isinstance(value, dict):
        if value.get("id") == user_id and "first_name" in value:
            return {"id": user_id, "is_bot": False, "first_name": placeholder}
        scrubbed = {key: scrub(item, user_id, names, placeholder) for key, item in value.items()}
        name = value.get("name")
        whose = value.get("user_id", user_id if name in names else None)
        if isinstance(name, str) and whose == user_id:
            scrubbed["name"] = placeholder
        return scrubbed
    if isinstance(value, list):
        if len(value) == 2 and value[0] == user_id and isinstance(value[1], str):
            return [user_id, placeholder]
        return [scrub(item, user_id, names, placeholder) for item in value]
    return value


def _may_name(payload: Any, user_id: int, names: frozenset[str]) -> ColumnElement[bool]:
    """Whether a JSON column's text holds the person's id or one of their names.

    Every row :func:`scrub` would change does, so only those are read: the outbox keeps about
    two days of rows, too many to read whole in the erasure's transaction. A name is looked for
    as typed and as JSON escapes it (non-ASCII letters, quotes).
    """
    text = payload.cast(String)
    needles = {str(user_id)} | {
        form for name in names if name for form in (name, json.dumps(name)[1:-1])
    }
    return or_(*(text.contains(needle, autoescape=True) for needle in sorted(needles)))


def _mentions(value: Any, user_id: int, names: frozenset[str]) -> bool:
    """Whether a received update shows the person's user, or a text that is one of ``names``.

    Whole texts only: a short name is part of many other people's names and texts.
    """
    if isinstance(value, dict):
        if value.get("id") == user_id and "first_name" in value:
            return True
        text = value.get("text")
        if isinstance(text, str) and text in names:
            return True
        return any(_mentions(item, user_id, names) for item in value.values())
    if isinstance(value, list):
        return any(_mentions(item, user_id, names) for item in value)
    return False


def press_only(payload: Any) -> dict[str, Any] | None:
    """What an erasure keeps of a handled press: its id alone (None: nothing, not a press).

    A press whose handler a kill cut short (the confirming one, say) is answered at the next
    start, which finds it by its id; the id names nobody.

    >>> press_only({"update_id": 5, "callback_query": {"id": "77", "from": {"id": 1}}})
    {'callback_query': {'id': '77'}}
    >>> press_only({"update_id": 6, "message": {"text": "hi"}}) is None
    True
    """
    query = payload.get("callback_query") if isinstance(payload, dict) else None
    if isinstance(query, dict) and isinstance(query.get("id"), str):
        return {"callback_query": {"id": query["id"]}}
    return None


class Erased(dict[str, int]):
    """How many stored records an erasure touched, by kind (for the person's answer)."""


class PrivacyRepository:
    """The statements behind ``/forgetme``, ``/forgetchat`` and the removed chats' purge."""

    def __init__(self, session: AsyncSession) -> None:
        self._session = session

    # -- one person ---------------------------------------------------------------------

    async def in_active_game(self, user_id: int) -> bool:
        """Whether the person holds a seat in a lobby or a running game (not left)."""
        statement = (
            select(GamePlayer.game_id)
            .join(Game, Game.id == GamePlayer.game_id)
            .where(
                GamePlayer.user_id == user_id,
                GamePlayer.left_at.is_(None),
                Game.status.in_([status.value for status in ACTIVE_STATUSES]),
            )
            .limit(1)
        )
        return await self._session.scalar(statement) is not None

    async def forget_user(self, user_id: int, placeholder: str, names: frozenset[str]) -> Erased:
        """Erase every form of their name (``names``), their figures and their private chat.

        Their seats stay, renamed ``placeholder``.
        """
        names = names - {placeholder}
        user = await self._session.get(User, user_id)
        erased = Erased()
        if user is not None:
            await self._session.execute(
                update(User)
                .where(User.id == user_id)
                .values(first_name=placeholder, last_name=None, username=None, language_code=None)
            )
        erased["figures"] = await self._count_deleted(
            delete(PlayerStats).where(PlayerStats.user_id == user_id)
        )
        await self._session.execute(delete(ReactionCount).where(ReactionCount.user_id == user_id))
        erased["ratings"] = await self._count_deleted(
            update(GamePlayerResult)
            .where(GamePlayerResult.user_id == user_id)
            .values(
                chat_mu=None,
                chat_sigma=None,
                global_mu=None,
                global_sigma=None,
                chat_points=None,
                global_points=None,
            )
        )
        await self._session.execute(
            update(GamePlayer).where(GamePlayer.user_id == user_id).values(shown_name=placeholder)
        )
        games = select(GamePlayer.game_id).where(GamePlayer.user_id == user_id)
        erased["games"] = int(
            await self._session.scalar(select(func.count()).select_from(games.subquery())) or 0
        )
        # A private chat's id is its person's: its language and its row go with them.
        await self._session.execute(delete(ChatSettings).where(ChatSettings.chat_id == user_id))
        await self._session.execute(delete(Chat).where(Chat.id == user_id, Chat.type == "private"))

        def rename(payload: Any) -> Any:
            return scrub(payload, user_id, names, placeholder)

        # Others' messages name them too (a /notify message, a lobby they left, the game an
        # admin stopped): every row that may, which the database finds in the rows' text.
        rows = select(OutboxMessage).where(_may_name(OutboxMessage.payload, user_id, names))
        erased["messages"] = await self._rewrite(rows, OutboxMessage.id, rename)
        erased["updates"] = await self._forget_updates(user_id, names)
        return erased

    async def _rewrite(
        self, rows: Any, key: Any, rename: Callable[[Any], Any], column: str = "payload"
    ) -> int:
        changed = 0
        last = None
        while True:
            page = rows if last is None else rows.where(key > last)
            found = list((await self._session.scalars(page.order_by(key).limit(_SCAN))).all())
            for row in found:
                payload = getattr(row, column)
                renamed = rename(payload)
                if renamed != payload:
                    setattr(row, column, renamed)
                    changed += 1
            await self._session.flush()
            if len(found) < _SCAN:
                return changed
            last = getattr(found[-1], key.key)

    async def _forget_updates(self, user_id: int, names: frozenset[str]) -> int:
        """Drop the payloads of handled updates that mention the person (their user or name).

        A pending update keeps its content until it is handled (which then drops it): the
        dispatcher would set it aside unanswered.
        """
        dropped: list[tuple[int, Any]] = []
        last = -(2**63)
        while True:
            statement = (
                select(_INBOX.c.update_id, _INBOX.c.payload)
                .where(
                    _INBOX.c.payload.is_not(None),
                    _INBOX.c.processed_at.is_not(None),
                    _INBOX.c.update_id > last,
                )
                .order_by(_INBOX.c.update_id)
                .limit(_SCAN)
            )
            found = list(await self._session.execute(statement))
            dropped += [
                (update_id, payload)
                for update_id, payload in found
                if _mentions(payload, user_id, names)
            ]
            if len(found) < _SCAN:
                break
            last = found[-1][0]
        await self._drop_contents(dropped)
        return len(dropped)

    async def _drop_contents(self, rows: list[tuple[int, Any]]) -> None:
        """Drop these handled updates' content, but for a press's id (see :func:`press_only`)."""
        emptied = [update_id for update_id, payload in rows if press_only(payload) is None]
        for start in range(0, len(emptied), _SCAN):
            batch = emptied[start : start + _SCAN]
            await self._session.execute(
                update(_INBOX).where(_INBOX.c.update_id.in_(batch)).values(payload=null())
            )
        for update_id, payload in rows:
            if (kept := press_only(payload)) is not None:
                await self._session.execute(
                    update(_INBOX).where(_INBOX.c.update_id == update_id).values(payload=kept)
                )

    # -- one chat -----------------------------------------------------------------------

    async def has_active_game(self, chat_id: int) -> bool:
        """Whether a lobby or a running game is open in any topic of the chat."""
        statement = (
            select(Game.id)
            .where(
                Game.chat_id == chat_id,
                Game.status.in_([status.value for status in ACTIVE_STATUSES]),
            )
            .limit(1)
        )
        return await self._session.scalar(statement) is not None

    async def forget_chat(self, chat_id: int, limit: int) -> tuple[Erased, bool]:
        """Erase up to ``limit`` of the chat's games, then (when none are left) the rest.

        Returns what went and whether all is gone; call again, a transaction per batch, until it is.
        """
        erased = Erased()
        batch = list(
            (
                await self._session.scalars(
                    select(Game.id).where(Game.chat_id == chat_id).order_by(Game.id).limit(limit)
                )
            ).all()
        )
        if batch:
            await self._session.execute(delete(Timer).where(Timer.game_id.in_(batch)))
            await self._session.execute(delete(GameResult).where(GameResult.game_id.in_(batch)))
            erased["games"] = await self._count_deleted(delete(Game).where(Game.id.in_(batch)))
        if len(batch) == limit:
            return erased, False
        erased["figures"] = await self._count_deleted(
            delete(PlayerStats).where(PlayerStats.scope_id == chat_id)
        )
        await self._session.execute(delete(ReactionCount).where(ReactionCount.scope_id == chat_id))
        await self._session.execute(delete(Timer).where(Timer.chat_id == chat_id))
        await self._session.execute(delete(OutboxMessage).where(OutboxMessage.chat_id == chat_id))
        await self._session.execute(delete(OutboxSender).where(OutboxSender.chat_id == chat_id))
        handled = select(_INBOX.c.update_id, _INBOX.c.payload).where(
            _INBOX.c.chat_id == chat_id,
            _INBOX.c.processed_at.is_not(None),
            _INBOX.c.payload.is_not(None),
        )
        await self._drop_contents([tuple(row) for row in await self._session.execute(handled)])
        # The settings go with the chat row (ON DELETE CASCADE).
        erased["chat"] = await self._count_deleted(delete(Chat).where(Chat.id == chat_id))
        return erased, True

    # -- chats that removed the bot -----------------------------------------------------

    async def mark_removed(self, chat_id: int, moment: datetime) -> None:
        """Remember when the bot was removed from the chat (the first time, until added back)."""
        await self._session.execute(
            update(Chat)
            .where(Chat.id == chat_id, Chat.removed_at.is_(None))
            .values(removed_at=moment)
        )

    async def mark_added(self, chat_id: int) -> None:
        """The bot is back in the chat: nothing is to be erased."""
        await self._session.execute(update(Chat).where(Chat.id == chat_id).values(removed_at=None))

    async def removed_before(
        self, moment: datetime, limit: int, *, after: tuple[datetime, int] | None = None
    ) -> list[tuple[int, datetime]]:
        """Chats the bot was removed from before ``moment``, oldest first, with when.

        ``after``: only those past this (removal time, chat id), in that order.
        """
        statement = (
            select(Chat.id, Chat.removed_at)
            .where(Chat.removed_at.is_not(None), Chat.removed_at < moment)
            .order_by(Chat.removed_at, Chat.id)
            .limit(limit)
        )
        if after is not None:
            at, chat_id = after  # compared column by column: each bound as its column's type
            statement = statement.where(
                or_(Chat.removed_at > at, and_(Chat.removed_at == at, Chat.id > chat_id))
            )
        return [
            (chat_id, cast("datetime", at))
            for chat_id, at in await self._session.execute(statement)
        ]

    async def chats_with_setting(self, field: str) -> list[int]:
        """The chats whose whole-chat settings turn ``field`` on (read in Python: JSON)."""
        rows = await self._session.execute(
            select(ChatSettings.chat_id, ChatSettings.values).where(
                ChatSettings.thread_id == WHOLE_CHAT
            )
        )
        return [chat_id for chat_id, values in rows if (values or {}).get(field) is True]

    async def try_purge_lock(self) -> bool:
        """Whether this transaction may purge: one worker at a time on PostgreSQL.

        A transaction-level advisory lock, released at commit; SQLite has one process.
        """
        if self._session.get_bind().dialect.name != "postgresql":
            return True
        return bool(await self._session.scalar(select(func.pg_try_advisory_xact_lock(PURGE_KEY))))

    async def _count_deleted(self, statement: Any) -> int:
        result = cast("CursorResult[Any]", await self._session.execute(statement))
        return int(result.rowcount or 0)


PURGE_KEY = 0x7E1E_5A1D
"""The advisory lock key held by the worker purging (old bookkeeping, removed chats)."""
