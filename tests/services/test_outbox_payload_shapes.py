"""A row whose payload is not the shape its kind needs is unreadable, like any row this version
cannot read: it is set aside (never raising past the reader), and the rows after it are read."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telesnap.services.outbox.rows import BOARD, LOBBY, NOTICE, NoticeEntry, read_rows
from telesnap.services.outbox.service import OutboxService, Shown
from telesnap.storage.models import OutboxMessage
from telesnap.storage.uow import UnitsOfWork

from .test_outbox_rows import durable_game
from .test_play_flow import PLACE

Sessions = async_sessionmaker[AsyncSession]
CALLED_OFF = {"notice": {"kind": "called_off", "args": {}}, "reply_to": None}
NOT_OBJECTS: list[Any] = [[1, 2, 3], "x", 7, None, True]
BAD_SHAPES: list[tuple[str, Any]] = [
    *[(kind, payload) for kind in (BOARD, LOBBY, NOTICE) for payload in NOT_OBJECTS],
    (NOTICE, {"notice": [1, 2], "reply_to": None}),
    (NOTICE, {"notice": "called_off", "reply_to": None}),
    (NOTICE, {"notice": {"kind": "called_off", "args": [1]}, "reply_to": None}),
    (BOARD, {"notes": 5}),
    (BOARD, {"notes": {"kind": "time_up"}}),
    (BOARD, {"notes": ["time_up"]}),
    (BOARD, {"notes": [[1]]}),
    (BOARD, {"table": [], "operations": []}),
]


def _row(row_id: int, kind: str, payload: Any) -> OutboxMessage:
    return OutboxMessage(
        id=row_id, chat_id=PLACE.chat_id, thread_id=0, kind=kind, game_id=5, payload=payload
    )


@pytest.mark.parametrize(("kind", "payload"), BAD_SHAPES, ids=repr)
def test_a_payload_not_of_its_kinds_shape_is_unreadable(kind: str, payload: Any) -> None:
    entries, unreadable = read_rows([_row(1, kind, payload), _row(2, NOTICE, CALLED_OFF)])
    assert unreadable == [1]
    assert [(type(entry), entry.id) for entry in entries] == [(NoticeEntry, 2)]


@pytest.mark.parametrize("payload", NOT_OBJECTS[:2], ids=repr)
async def test_a_line_sets_such_a_row_aside_and_goes_on(
    session_factory: Sessions, payload: Any
) -> None:
    outbox = OutboxService(UnitsOfWork(session_factory))
    async with session_factory() as session, session.begin():
        session.add(OutboxMessage(chat_id=PLACE.chat_id, kind=NOTICE, payload=payload))
        session.add(OutboxMessage(chat_id=PLACE.chat_id, kind=NOTICE, payload=CALLED_OFF))
    (entry,) = (await outbox.line(PLACE.chat_id)).entries
    assert isinstance(entry, NoticeEntry)
    assert entry.notice.kind == "called_off"
    assert (await outbox.line(PLACE.chat_id)).entries == [entry], "the bad row is failed"


async def test_the_boards_shown_of_a_game_leave_such_a_row_out(session_factory: Sessions) -> None:
    """What a live board reads back (its game's last boards sent) never fails on such a row."""
    _, outbox, _ = await durable_game(session_factory)
    (start,) = (await outbox.line(PLACE.chat_id)).entries
    await outbox.sent(Shown(PLACE.chat_id, (start.id,), 41))
    async with session_factory() as session, session.begin():
        broken = OutboxMessage(
            chat_id=PLACE.chat_id, kind=BOARD, game_id=start.game_id, payload=[1, 2, 3]
        )
        broken.state = "sent"
        session.add(broken)
    shown = await outbox.boards_shown(start.game_id, 5)
    assert [entry.id for entry in shown] == [start.id]
