"""What the emulator records, as it keeps it and as the test-side client reads it back.

A record is one type on both sides: the emulator keeps a :class:`Toast` for each
press and an :class:`UpdateRecord` for each update (and changes them as the bot
answers and confirms), the server sends them as JSON with :func:`to_json`, and
:func:`from_json` rebuilds the same type in the client. Times named ``*_at`` are
the emulator clock's monotonic seconds; ``*_wall`` are Unix times.

>>> toast = Toast("q1", -5, 7, 42, "flip", 1.0, "Too late!", False, None, 1.5, 0.0)
>>> from_json(Toast, to_json(toast)) == toast
True
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, TypeVar

Record = TypeVar("Record")


@dataclass(frozen=True)
class Revision:
    """One earlier version of a bot message, replaced by an edit at ``replaced_at``."""

    text: str
    parse_mode: str | None
    reply_markup: dict[str, Any] | None
    replaced_at: float


@dataclass
class TranscriptMessage:
    """A message of a chat as it is now, with its history of edits.

    The emulator keeps each message as one of these (and changes it as the bot
    edits, deletes or pins it); the chat and the sender are named by id, so that
    the record reads the same on the client side.
    """

    chat_id: int
    message_id: int
    sender_id: int
    is_from_bot: bool
    date: int
    """The Unix time Telegram stamps on the message."""
    sent_at: float
    message_thread_id: int | None = None
    kind: str = "text"
    """``text``, or the kind of file it carries (``photo``, ``document``); then ``text``
    is the caption."""
    text: str = ""
    parse_mode: str | None = None
    entities: list[dict[str, Any]] = field(default_factory=list)
    reply_markup: dict[str, Any] | None = None
    file: dict[str, Any] | None = None
    """The file as Telegram describes it (``file_id``, ``file_size``, ...)."""
    history: list[Revision] = field(default_factory=list)
    """The latest earlier versions (``EmulatorConfig.versions_kept_per_message``), oldest first."""
    edits: int = 0
    """How many times it was edited, however few versions ``history`` keeps."""
    edit_date: int | None = None
    deleted: bool = False
    pinned: bool = False
    reply_to_message_id: int | None = None
    """The message this one replies to, if any."""

    @property
    def file_name(self) -> str | None:
        """The name of the document it carries, if any."""
        return (self.file or {}).get("file_name")

    @property
    def file_size(self) -> int | None:
        """The size in bytes of the file it carries, when known."""
        return (self.file or {}).get("file_size")

    @property
    def buttons(self) -> list[list[dict[str, Any]]]:
        """The inline keyboard's rows of buttons, empty when there is none."""
        if not self.reply_markup:
            return []
        rows: list[list[dict[str, Any]]] = self.reply_markup.get("inline_keyboard", [])
        return rows

    @property
    def button_texts(self) -> list[str]:
        """Every inline button's text, row by row."""
        return [button["text"] for row in self.buttons for button in row]


@dataclass
class Toast:
    """A button press (callback query) and the bot's answer to it, if any yet."""

    callback_query_id: str
    chat_id: int
    message_id: int
    user_id: int
    data: str | None
    pressed_at: float
    text: str | None = None
    show_alert: bool = False
    url: str | None = None
    answered_at: float | None = None
    answered_wall: float | None = None

    @property
    def is_answered(self) -> bool:
        """Whether the bot has answered this press."""
        return self.answered_at is not None


@dataclass(frozen=True)
class CallRecord:
    """One Bot API call the bot made, and how the emulator answered it."""

    sequence: int
    method: str
    params: dict[str, Any]
    received_at: float
    received_wall: float
    answered_at: float | None
    status: int | None
    description: str | None
    emulated: bool
    fault: str | None


@dataclass(frozen=True)
class Violation:
    """A 4xx answer the bot brought on itself (injected faults excluded)."""

    sequence: int
    method: str
    params: dict[str, Any]
    status: int
    description: str
    at: float


@dataclass(frozen=True)
class Delivery:
    """One hand-over of an update to the bot: a getUpdates answer or a webhook POST."""

    at: float
    wall: float
    via: str


@dataclass
class UpdateRecord:
    """An update the emulator produced, and every time it was handed to the bot.

    Until the bot confirms it (``confirmed``), it is handed over again.
    """

    update_id: int
    kind: str
    chat_id: int | None
    payload: dict[str, Any]
    enqueued_at: float
    enqueued_wall: float
    deliveries: list[Delivery] = field(default_factory=list)
    confirmed: bool = False
    redelivery: bool = False
    """Handed over again on a test's request: it waits for its turn whatever the offset."""

    @property
    def first_delivery(self) -> Delivery | None:
        """The first hand-over, or ``None`` if the bot has not received the update yet."""
        return self.deliveries[0] if self.deliveries else None


@dataclass(frozen=True)
class Fault:
    """A planned failure: the next ``count`` calls of ``method`` fail this way.

    ``kind`` is ``retry_after`` (429), ``server_error`` (500), ``bad_gateway``
    (502), ``forbidden`` (403) or ``timeout`` (hold the request ``hold`` seconds,
    then drop the connection, or answer normally when ``answer_late``).
    """

    method: str
    kind: str
    count: int = 1
    retry_after: int = 1
    hold: float = 1.0
    answer_late: bool = False


NESTED: dict[tuple[type, str], type] = {
    (TranscriptMessage, "history"): Revision,
    (UpdateRecord, "deliveries"): Delivery,
}


def to_json(record: Any) -> dict[str, Any]:
    """Return ``record`` (a dataclass of this module) as a JSON-ready dict."""
    return dataclasses.asdict(record)


def from_json(cls: type[Record], data: dict[str, Any]) -> Record:
    """Rebuild a record of type ``cls`` from :func:`to_json`'s output."""
    values: dict[str, Any] = {}
    for record_field in dataclasses.fields(cls):  # type: ignore[arg-type]
        value = data[record_field.name]
        nested = NESTED.get((cls, record_field.name))
        if nested is not None:
            value = [from_json(nested, item) for item in value]
        values[record_field.name] = value
    return cls(**values)
