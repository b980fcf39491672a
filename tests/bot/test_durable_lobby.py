"""Lobbies and notices through the real outbox: one lobby message per game, rows in order."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from telegram.error import BadRequest

from telesnap.bot.delivery.direct import TextPost
from telesnap.services.outbox.rows import Notice, record_notice
from telesnap.storage.models import Game

from ..services.test_play_flow import ANN, BOB, CID, PLACE, receipt
from .sending import FakeBotApi, Sessions, Wired


@pytest.fixture
async def wired(session_factory: Sessions) -> AsyncIterator[Wired]:
    wired = Wired(session_factory, FakeBotApi())
    yield wired
    await wired.close()


async def states(wired: Wired) -> list[tuple[str, str]]:
    return [(row.kind, row.state) for row in await wired.rows()]


async def test_lobby_changes_made_while_it_waits_go_in_one_message_then_edit_it(
    wired: Wired,
) -> None:
    wired.bot.held = asyncio.Event()
    wired.senders.post(TextPost(PLACE.chat_id, 0, "busy"))  # the chat's sender is busy meanwhile
    opened = await wired.lobby.open(PLACE, ANN, receipt())
    await wired.lobby.join(PLACE, BOB, receipt())
    wired.bot.held.set()
    await wired.settle()
    _, lobby = wired.bot.calls
    assert lobby.method == "send_message", "one lobby message"
    assert "Bob" in lobby.text, "it shows the newest lobby"
    async with wired.sessions() as session:
        game = await session.get(Game, opened.lobby.game_id)
        assert game is not None
        assert game.lobby_message_id == lobby.message_id, "stored with the rows it settled"
    await wired.lobby.join(PLACE, CID, receipt())
    await wired.settle()
    edit = wired.bot.calls[-1]
    assert (edit.method, edit.message_id, "Cid" in edit.text) == (
        "edit_message_text",
        lobby.message_id,
        True,
    ), "edited, not posted again"
    assert await states(wired) == [("lobby", "sent")] * 3
    calls = len(wired.bot.calls)
    wired.bot.held = asyncio.Event()
    wired.senders.post(TextPost(PLACE.chat_id, 0, "busy again"))
    await wired.lobby.leave(PLACE, CID, receipt())
    await wired.lobby.join(PLACE, CID, receipt())  # back to what the message shows
    wired.bot.held.set()
    await wired.settle()
    assert len(wired.bot.calls) == calls + 1, "merged, the two changes edit nothing"
    assert await states(wired) == [("lobby", "sent")] * 5, "'not modified' counts as sent"


async def test_a_notice_of_an_unknown_kind_is_set_aside_and_the_next_one_goes_out(
    wired: Wired,
) -> None:
    async with wired.lobby._units() as uow:
        await record_notice(uow, PLACE, Notice("a_newer_kind", {"x": 1}))
        await record_notice(uow, PLACE, Notice("called_off"))
    await wired.settle()
    assert [call.text for call in wired.bot.calls] == ["The game was called off."]
    assert await states(wired) == [("notice", "failed"), ("notice", "sent")]


async def test_a_lobby_message_deleted_in_the_chat_is_posted_again(wired: Wired) -> None:
    await wired.lobby.open(PLACE, ANN, receipt())
    await wired.settle()
    wired.bot.errors.append(
        ("edit_message_text", BadRequest("Bad Request: message to edit not found"))
    )
    await wired.lobby.join(PLACE, BOB, receipt())
    await wired.settle()
    first, again = wired.bot.calls
    assert (first.method, again.method) == ("send_message", "send_message")
    assert "Bob" in again.text
    assert again.message_id != first.message_id
    await wired.lobby.join(PLACE, CID, receipt())
    await wired.settle()
    assert wired.bot.calls[-1].message_id == again.message_id, "the new message is edited next"
