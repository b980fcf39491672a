"""The link a /notify message gives to the lobby: by username, by id, or none."""

from __future__ import annotations

from datetime import UTC, datetime

from telegram import Chat, Message

from telesnap.bot.handlers.notify import lobby_link


def command_in(chat: Chat, message_id: int = 41, thread_id: int | None = None) -> Message:
    return Message(
        message_id,
        datetime(2026, 12, 2, tzinfo=UTC),
        chat,
        message_thread_id=thread_id,
        is_topic_message=thread_id is not None,
    )


def test_a_public_chat_is_linked_by_its_username() -> None:
    chat = Chat(-1001234567890, "supergroup", username="snapclub")
    assert lobby_link(command_in(chat)) == "https://t.me/snapclub/41"


def test_a_private_supergroup_is_linked_by_its_id_and_topic() -> None:
    chat = Chat(-1001234567890, "supergroup", is_forum=True)
    assert lobby_link(command_in(chat, thread_id=7)) == "https://t.me/c/1234567890/41?thread=7"


def test_a_basic_group_has_no_link() -> None:
    assert lobby_link(command_in(Chat(-4242, "group"))) is None
