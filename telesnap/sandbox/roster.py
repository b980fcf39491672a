"""The sandbox's people and chats, kept in a JSON file beside the database between runs.

The games are in the database; the emulator's users, chats, topics, roles,
network delays, robots, the skipped clock and the last update id are saved
here, so a restarted sandbox has the same ids, never hands the bot an update
id it has seen, and the games go on. Messages are not kept (the bot posts
each running game again when it starts). A first run creates two people, a
group, a forum with two topics and a private chat for each person.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from ..emulator.core import Emulator
from ..emulator.network import NetworkDelay
from ..emulator.world import Chat, User
from .robots import Robots, RobotStyle

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
MADE_DATABASE = "made_database"
"""The field that marks a database the sandbox created (only such a one ``--fresh`` removes)."""
UNSAVED_UPDATES = 10_000
"""Room left after the saved update id for updates a crash kept from being saved."""


def save(
    path: Path,
    emulator: Emulator,
    robots: Robots,
    skipped_seconds: float,
    *,
    made_database: bool = False,
) -> None:
    """Write the people, chats, robots and clock to ``path`` (atomically).

    ``made_database``: the sandbox created the database beside it, so ``--fresh`` may remove it.
    """
    world = emulator.world
    data = {
        "version": FORMAT_VERSION,
        MADE_DATABASE: made_database,
        "skipped_seconds": skipped_seconds,
        "last_update_id": emulator.updates.last_update_id,
        "users": [
            {
                "id": user.id,
                "first_name": user.first_name,
                "last_name": user.last_name,
                "language_code": user.language_code,
            }
            for user in world.users.values()
            if not user.is_bot
        ],
        "chats": [
            {
                "id": chat.id,
                "type": chat.type,
                "title": chat.title,
                "is_forum": chat.is_forum,
                "topics": {str(thread): name for thread, name in chat.topics.items()},
                "roles": {str(user_id): role for user_id, role in chat.roles.items()},
                "bot_role": chat.bot_role,
                "last_message_id": chat.last_message_id,
            }
            for chat in world.chats.values()
        ],
        "network": {
            str(user_id): {"delay_ms": link.delay_ms, "jitter_ms": link.jitter_ms}
            for user_id, link in emulator.network.items()
        },
        "robots": [robot.to_json() for robot in robots.robots.values()],
    }
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(temporary, path)


def made_database(path: Path) -> bool:
    """Whether the chats saved at ``path`` say the sandbox created the database beside them."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False
    except (OSError, ValueError) as error:
        logger.warning(
            "%s cannot be read (%s): the database is not taken as a sandbox's", path, error
        )
        return False
    return isinstance(data, dict) and data.get(MADE_DATABASE) is True


def restore(path: Path, emulator: Emulator, robots: Robots) -> float | None:
    """Put back what :func:`save` wrote; return the skipped seconds, or None without a file."""
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    if data.get("version") != FORMAT_VERSION:
        raise ValueError(f"{path} was written by another version of the sandbox")
    world = emulator.world
    # The bot skips an update id it has seen, so a new run goes on after the last one.
    emulator.updates.continue_after(int(data.get("last_update_id", 0)) + UNSAVED_UPDATES)
    for saved in data["users"]:
        world.restore_user(
            User(
                int(saved["id"]),
                saved["first_name"],
                saved.get("last_name"),
                language_code=saved.get("language_code"),
            )
        )
    for saved in data["chats"]:
        chat = Chat(
            int(saved["id"]),
            saved["type"],
            saved.get("title"),
            is_forum=bool(saved.get("is_forum")),
            topics={int(thread): name for thread, name in saved["topics"].items()},
            roles={int(user_id): role for user_id, role in saved["roles"].items()},
            bot_role=saved.get("bot_role", "member"),
            last_message_id=int(saved.get("last_message_id", 0)),
        )
        if chat.type == "private":
            chat.private_user = world.user(chat.id)
        world.restore_chat(chat)
    for user_id, link in data.get("network", {}).items():
        emulator.network[int(user_id)] = NetworkDelay(link["delay_ms"], link["jitter_ms"])
    for saved in data.get("robots", []):
        style = RobotStyle(saved["reaction_ms"], saved["jitter_ms"], saved["wrong_rate"])
        robots.add(int(saved["user_id"]), style)
    return float(data.get("skipped_seconds", 0.0))


def create_first_world(emulator: Emulator) -> None:
    """Two people, a group, a forum with two topics, and a private chat for each person."""
    world = emulator.world
    ann = world.add_user("Ann")
    bob = world.add_user("Bob")
    people = [ann.id, bob.id]
    world.add_chat("group", title="Snap club", member_ids=[bob.id], admin_ids=[ann.id])
    forum = world.add_chat(
        "supergroup", title="Snap forum", member_ids=[bob.id], admin_ids=[ann.id], is_forum=True
    )
    world.add_topic(forum.id, "Table 1")
    world.add_topic(forum.id, "Table 2")
    for user_id in people:
        world.add_chat("private", member_ids=[user_id])
    emulator.changes.notify()
