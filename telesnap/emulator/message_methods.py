"""The emulated methods that send, edit, delete and pin messages, and answer presses."""

from __future__ import annotations

import hashlib
import time
from typing import TYPE_CHECKING, Any

from .checks import (
    check_caption,
    check_message_text,
    check_reply_markup,
    check_toast,
    render_text,
)
from .errors import MESSAGE_NOT_MODIFIED, bad_request
from .records import Revision, TranscriptMessage
from .spec import ATTACHED, UploadedFile
from .world import Chat

if TYPE_CHECKING:
    from .core import Emulator

CHAT_ACTIONS = frozenset(
    {
        "typing",
        "upload_photo",
        "record_video",
        "upload_video",
        "record_voice",
        "upload_voice",
        "upload_document",
        "choose_sticker",
        "find_location",
        "record_video_note",
        "upload_video_note",
    }
)


def _new_bot_message(
    emulator: Emulator, params: dict[str, Any]
) -> tuple[Chat, int | None, TranscriptMessage | None]:
    """The chat and topic of a message the bot sends, and the message it replies to."""
    thread_id = params.get("message_thread_id")
    chat = emulator.world.writable_chat(params["chat_id"], thread_id)
    reply = params.get("reply_parameters") or {}
    reply_to, allow_without = reply.get("message_id"), reply.get("allow_sending_without_reply")
    replied = emulator.world.live_message(chat.id, reply_to) if reply_to else None
    if reply_to and replied is None and not allow_without:
        raise bad_request("message to be replied not found")
    return chat, thread_id, replied


def _admit(emulator: Emulator, chat: Chat) -> None:
    emulator.flood.admit(chat.id, is_private=chat.type == "private")


async def send_message(emulator: Emulator, params: dict[str, Any]) -> Any:
    """sendMessage: validate text and keyboard, count against flood limits, store."""
    chat, thread_id, replied = _new_bot_message(emulator, params)
    text, entities = render_text(params["text"], params.get("parse_mode"), params.get("entities"))
    check_message_text(text)
    markup = check_reply_markup(params.get("reply_markup"))
    _admit(emulator, chat)
    message = emulator.world.add_message(chat, emulator.bot, thread_id)
    message.text, message.entities, message.reply_markup = text, entities, markup
    message.parse_mode = params.get("parse_mode")
    message.reply_to_message_id = replied.message_id if replied else None
    return emulator.world.telegram_message(message)


async def _send_file(emulator: Emulator, params: dict[str, Any], kind: str) -> Any:
    chat, thread_id, replied = _new_bot_message(emulator, params)
    caption, entities = render_text(
        params.get("caption", ""), params.get("parse_mode"), params.get("caption_entities")
    )
    check_caption(caption)
    markup = check_reply_markup(params.get("reply_markup"))
    _admit(emulator, chat)
    message = emulator.world.add_message(chat, emulator.bot, thread_id)
    message.kind, message.text, message.entities = kind, caption, entities
    message.parse_mode, message.reply_markup = params.get("parse_mode"), markup
    message.file = _file_json(emulator, params[kind], kind)
    message.reply_to_message_id = replied.message_id if replied else None
    return emulator.world.telegram_message(message)


_NAMED_FILES = ("animation", "document")
"""The kinds of file whose name and type Telegram repeats in the message."""


def _file_json(emulator: Emulator, source: UploadedFile | str, kind: str) -> dict[str, Any]:
    if isinstance(source, UploadedFile):
        stored = emulator.files.keep(kind, source.file_name, source.content_type, source.content)
        data: dict[str, Any] = {
            "file_id": stored.file_id,
            "file_unique_id": stored.file_unique_id,
            "file_size": source.size,
        }
        if kind in _NAMED_FILES:
            data["file_name"] = source.file_name
            data["mime_type"] = source.content_type
        return data
    kept = emulator.files.get(source)
    if kept is not None:
        data = {"file_id": kept.file_id, "file_unique_id": kept.file_unique_id}
        data["file_size"] = kept.size
        if kind in _NAMED_FILES:
            data["file_name"] = kept.file_name
            data["mime_type"] = kept.content_type
        return data
    return {"file_id": source, "file_unique_id": hashlib.sha1(source.encode()).hexdigest()[:12]}


async def send_photo(emulator: Emulator, params: dict[str, Any]) -> Any:
    """sendPhoto: an uploaded photo (name and size recorded), a file_id or a URL."""
    return await _send_file(emulator, params, "photo")


async def send_animation(emulator: Emulator, params: dict[str, Any]) -> Any:
    """sendAnimation: a GIF or a silent video, stored like any upload."""
    return await _send_file(emulator, params, "animation")


async def send_document(emulator: Emulator, params: dict[str, Any]) -> Any:
    """sendDocument: an uploaded file (name and size recorded), a file_id or a URL."""
    return await _send_file(emulator, params, "document")


def _editable(emulator: Emulator, params: dict[str, Any]) -> TranscriptMessage:
    if "inline_message_id" in params:
        raise bad_request("MESSAGE_ID_INVALID")
    if "chat_id" not in params or "message_id" not in params:
        raise bad_request("message identifier is not specified")
    message = emulator.world.message(params["chat_id"], params["message_id"], "edit")
    if not message.is_from_bot:
        raise bad_request("message can't be edited")
    return message


def _keep_version(emulator: Emulator, message: TranscriptMessage) -> None:
    """Keep the version an edit replaces; only the latest few, so a long game does not grow."""
    message.history.append(
        Revision(message.text, message.parse_mode, message.reply_markup, emulator.clock())
    )
    del message.history[: -emulator.config.versions_kept_per_message]
    message.edits += 1


def _apply_edit(
    emulator: Emulator,
    message: TranscriptMessage,
    text: str,
    entities: list[dict[str, Any]],
    parse_mode: str | None,
    markup: dict[str, Any] | None,
) -> Any:
    if (text, entities, markup) == (message.text, message.entities, message.reply_markup):
        raise bad_request(MESSAGE_NOT_MODIFIED)
    _admit(emulator, emulator.world.chat(message.chat_id))
    _keep_version(emulator, message)
    message.text, message.entities, message.parse_mode = text, entities, parse_mode
    message.reply_markup = markup
    message.edit_date = int(time.time())
    return emulator.world.telegram_message(message)


async def edit_message_text(emulator: Emulator, params: dict[str, Any]) -> Any:
    """editMessageText: a new text; a missing reply_markup removes the keyboard, as in Telegram."""
    message = _editable(emulator, params)
    if message.kind != "text":
        raise bad_request("there is no text in the message to edit")
    text, entities = render_text(
        params.get("text", ""), params.get("parse_mode"), params.get("entities")
    )
    check_message_text(text)
    markup = check_reply_markup(params.get("reply_markup"))
    return _apply_edit(emulator, message, text, entities, params.get("parse_mode"), markup)


async def edit_message_reply_markup(emulator: Emulator, params: dict[str, Any]) -> Any:
    """editMessageReplyMarkup: a new inline keyboard (none removes it)."""
    message = _editable(emulator, params)
    markup = check_reply_markup(params.get("reply_markup"))
    return _apply_edit(
        emulator, message, message.text, message.entities, message.parse_mode, markup
    )


EDITABLE_MEDIA = frozenset({"photo", "document"})


async def edit_message_media(emulator: Emulator, params: dict[str, Any]) -> Any:
    """editMessageMedia: a new photo or document (an upload or a file_id), caption, keyboard."""
    message = _editable(emulator, params)
    media = params["media"]
    kind = media.get("type")
    if kind not in EDITABLE_MEDIA:
        raise bad_request(f"media type {kind!r} is not emulated (photo and document are)")
    if message.kind == "text":
        raise bad_request("there is no media in the message to edit")
    source = media.get("media")
    if isinstance(source, str) and source.startswith("attach://"):
        source = params.get(ATTACHED, {}).get(source.removeprefix("attach://"))
    if not isinstance(source, UploadedFile | str) or not source:
        raise bad_request("wrong file identifier/HTTP URL specified")
    caption, entities = render_text(
        media.get("caption", ""), media.get("parse_mode"), media.get("caption_entities")
    )
    check_caption(caption)
    markup = check_reply_markup(params.get("reply_markup"))
    _admit(emulator, emulator.world.chat(message.chat_id))
    _keep_version(emulator, message)
    message.kind, message.file = kind, _file_json(emulator, source, kind)
    message.text, message.entities, message.parse_mode = caption, entities, media.get("parse_mode")
    message.reply_markup = markup
    message.edit_date = int(time.time())
    return emulator.world.telegram_message(message)


async def delete_message(emulator: Emulator, params: dict[str, Any]) -> Any:
    """deleteMessage: the bot's own messages, or anyone's where it is an administrator."""
    message = emulator.world.message(params["chat_id"], params["message_id"], "delete")
    chat = emulator.world.chat(message.chat_id)
    if not message.is_from_bot and chat.type != "private" and chat.bot_role != "administrator":
        raise bad_request("message can't be deleted")
    message.deleted = True
    return True


async def answer_callback_query(emulator: Emulator, params: dict[str, Any]) -> Any:
    """answerCallbackQuery: once per press, in time, toast at most 200 characters."""
    check_toast(params.get("text"))
    emulator.answer_callback(params["callback_query_id"], params)
    return True


async def send_chat_action(emulator: Emulator, params: dict[str, Any]) -> Any:
    """sendChatAction: a known action in a chat the bot can write to."""
    emulator.world.writable_chat(params["chat_id"], params.get("message_thread_id"))
    if params["action"] not in CHAT_ACTIONS:
        raise bad_request("wrong parameter action in request")
    return True


def _check_pin_rights(chat: Chat) -> None:
    if chat.type != "private" and chat.bot_role != "administrator":
        raise bad_request("not enough rights to manage pinned messages in the chat")


async def pin_chat_message(emulator: Emulator, params: dict[str, Any]) -> Any:
    """pinChatMessage: needs administrator rights outside private chats."""
    chat = emulator.world.writable_chat(params["chat_id"])
    _check_pin_rights(chat)
    emulator.world.message(chat.id, params["message_id"], "pin").pinned = True
    return True


async def unpin_chat_message(emulator: Emulator, params: dict[str, Any]) -> Any:
    """unpinChatMessage: the given message, or the most recently pinned one."""
    chat = emulator.world.writable_chat(params["chat_id"])
    _check_pin_rights(chat)
    if "message_id" in params:
        emulator.world.message(chat.id, params["message_id"], "unpin").pinned = False
        return True
    pinned = [
        message
        for (chat_id, _), message in sorted(emulator.world.messages.items())
        if chat_id == chat.id and message.pinned
    ]
    if pinned:
        pinned[-1].pinned = False
    return True


async def get_file(emulator: Emulator, params: dict[str, Any]) -> Any:
    """getFile: the ``file_path`` of a kept upload, to download from ``/file/bot<token>/``."""
    stored = emulator.files.get(str(params["file_id"]))
    if stored is None:
        raise bad_request("invalid file_id")
    return {
        "file_id": stored.file_id,
        "file_unique_id": stored.file_unique_id,
        "file_size": stored.size,
        "file_path": stored.file_path,
    }
