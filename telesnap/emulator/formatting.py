"""Telegram's HTML parse mode: turn formatted text into plain text and entities.

Offsets and lengths count UTF-16 code units, as Telegram's do. Errors are worded
like Telegram's ``Bad Request: can't parse entities: ...``.

>>> parse_html("<b>Snap!</b> &lt;3")
('Snap! <3', [{'type': 'bold', 'offset': 0, 'length': 5}])
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html import unescape
from typing import Any

from .errors import ApiError, bad_request

SIMPLE_TAGS = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "code": "code",
    "pre": "pre",
    "blockquote": "blockquote",
}
OTHER_TAGS = frozenset({"a", "span", "tg-emoji"})
START_TAG = re.compile(
    r"<([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[a-zA-Z-]+(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s>\"']+))?)*)\s*>"
)
END_TAG = re.compile(r"</([a-zA-Z][a-zA-Z0-9-]*)\s*>")
ATTRIBUTE = re.compile(r"([a-zA-Z-]+)(?:\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s>\"']+)))?")
CHARACTER_REFERENCE = re.compile(r"&(?:lt|gt|amp|quot|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6});")


def utf16_length(text: str) -> int:
    """Return the length of ``text`` in UTF-16 code units, Telegram's unit of length.

    >>> utf16_length("🃏A")
    3
    """
    return len(text.encode("utf-16-le")) // 2


@dataclass
class _OpenTag:
    name: str
    entity: dict[str, Any] | None
    start: int
    byte_offset: int
    children: list[dict[str, Any]] = field(default_factory=list)


def parse_html(source: str) -> tuple[str, list[dict[str, Any]]]:
    """Return the plain text and the entities of ``source`` in Telegram's HTML mode.

    Raises :class:`ApiError` 400 when ``source`` is not valid Telegram HTML.
    """
    text_parts: list[str] = []
    length = 0
    entities: list[dict[str, Any]] = []
    stack: list[_OpenTag] = []
    position = 0
    while position < len(source):
        char = source[position]
        byte_offset = len(source[:position].encode("utf-8"))
        if char == "<":
            end = END_TAG.match(source, position)
            if end:
                _close(stack, end.group(1).lower(), byte_offset, length, entities)
                position = end.end()
                continue
            start = START_TAG.match(source, position)
            if not start:
                raise _parse_error(f"Unsupported start tag at byte offset {byte_offset}")
            name = start.group(1).lower()
            entity = _entity_for(name, _attributes(start.group(2)), byte_offset)
            stack.append(_OpenTag(name, entity, length, byte_offset))
            position = start.end()
            continue
        if char == "&":
            reference = CHARACTER_REFERENCE.match(source, position)
            if not reference:
                raise _parse_error(
                    f"Character entity expected at byte offset {byte_offset}"
                    if source.startswith("&#", position)
                    else f"Can't find end of the entity starting at byte offset {byte_offset}"
                )
            decoded = unescape(reference.group(0))
            text_parts.append(decoded)
            length += utf16_length(decoded)
            position = reference.end()
            continue
        text_parts.append(char)
        length += utf16_length(char)
        position += 1
    if stack:
        raise _parse_error(f'Can\'t find end tag corresponding to start tag "{stack[-1].name}"')
    entities.sort(key=lambda entity: (entity["offset"], -entity["length"]))
    return "".join(text_parts), entities


def _close(
    stack: list[_OpenTag],
    name: str,
    byte_offset: int,
    length: int,
    entities: list[dict[str, Any]],
) -> None:
    if not stack:
        raise _parse_error(f"Unexpected end tag at byte offset {byte_offset}")
    opened = stack.pop()
    if opened.name != name:
        raise _parse_error(
            f'Unmatched end tag at byte offset {byte_offset}, expected "</{opened.name}>", '
            f'found "</{name}>"'
        )
    if opened.entity is None or length == opened.start:
        return
    entity = {**opened.entity, "offset": opened.start, "length": length - opened.start}
    if entity["type"] == "code" and stack and stack[-1].name == "pre" and "language" in entity:
        # <pre><code class="language-x"> is one pre entity with a language.
        stack[-1].entity = {"type": "pre", "language": entity["language"]}
        return
    if entity["type"] == "code":
        entity.pop("language", None)
    entities.append(entity)


def _attributes(raw: str) -> dict[str, str]:
    return {
        match.group(1).lower(): unescape(next((g for g in match.groups()[1:] if g), ""))
        for match in ATTRIBUTE.finditer(raw)
    }


def _entity_for(name: str, attributes: dict[str, str], byte_offset: int) -> dict[str, Any] | None:
    if name in SIMPLE_TAGS:
        entity: dict[str, Any] = {"type": SIMPLE_TAGS[name]}
        if name == "blockquote" and "expandable" in attributes:
            entity["type"] = "expandable_blockquote"
        if name == "code" and attributes.get("class", "").startswith("language-"):
            entity["language"] = attributes["class"].removeprefix("language-")
        return entity
    if name == "a":
        url = attributes.get("href", "")
        return {"type": "text_link", "url": url} if url else None
    if name == "span" and attributes.get("class") == "tg-spoiler":
        return {"type": "spoiler"}
    if name == "tg-emoji" and "emoji-id" in attributes:
        return {"type": "custom_emoji", "custom_emoji_id": attributes["emoji-id"]}
    if name in OTHER_TAGS:
        raise _parse_error(
            f'Tag "{name}" must have class "tg-spoiler" at byte offset {byte_offset}'
        )
    raise _parse_error(f'Unsupported start tag "{name}" at byte offset {byte_offset}')


def _parse_error(detail: str) -> ApiError:
    return bad_request(f"can't parse entities: {detail}")
