"""The files the bot uploads, kept (up to a byte budget) and served as Telegram does.

Telegram gives each upload a ``file_id``; ``getFile`` turns it into a
``file_path`` that can be downloaded from ``/file/bot<token>/<file_path>``.
When the kept files pass the budget, the oldest are forgotten: ``getFile``
then answers ``Bad Request: invalid file_id``, as for a file Telegram lost.

>>> store = FileStore(budget_bytes=10)
>>> first = store.keep("photo", "a.png", "image/png", b"123456")
>>> second = store.keep("photo", "b.png", "image/png", b"7890123")
>>> store.get(first.file_id) is None, store.get(second.file_id).content
(True, b'7890123')
"""

from __future__ import annotations

import hashlib
import itertools
from collections import OrderedDict
from dataclasses import dataclass, field

_numbers = itertools.count(1)


@dataclass(frozen=True)
class StoredFile:
    """One uploaded file and what Telegram says about it."""

    file_id: str
    file_unique_id: str
    file_path: str
    file_name: str
    content_type: str
    content: bytes = field(repr=False)

    @property
    def size(self) -> int:
        """The file's size in bytes."""
        return len(self.content)


class FileStore:
    """Uploaded files by ``file_id`` and by ``file_path``, oldest forgotten past the budget."""

    def __init__(self, budget_bytes: int) -> None:
        self.budget_bytes = budget_bytes
        self._files: OrderedDict[str, StoredFile] = OrderedDict()
        self._by_path: dict[str, str] = {}
        self.total_bytes = 0

    def keep(self, kind: str, file_name: str, content_type: str, content: bytes) -> StoredFile:
        """Keep an upload of ``kind`` (``photo``, ``document``) and return its record."""
        number = next(_numbers)
        digest = hashlib.sha1(content + str(number).encode()).hexdigest()
        file_id = f"{kind}-{number}-{digest[:16]}"
        extension = file_name.rpartition(".")[2] if "." in file_name else "bin"
        stored = StoredFile(
            file_id=file_id,
            file_unique_id=digest[:12],
            file_path=f"{kind}s/file_{number}.{extension}",
            file_name=file_name,
            content_type=content_type,
            content=content,
        )
        self._files[file_id] = stored
        self._by_path[stored.file_path] = file_id
        self.total_bytes += stored.size
        while self.total_bytes > self.budget_bytes and len(self._files) > 1:
            self._forget_oldest()
        if self.total_bytes > self.budget_bytes:
            self._forget_oldest()
        return stored

    def _forget_oldest(self) -> None:
        _, oldest = self._files.popitem(last=False)
        self._by_path.pop(oldest.file_path, None)
        self.total_bytes -= oldest.size

    def get(self, file_id: str) -> StoredFile | None:
        """The file with ``file_id``, or ``None`` if it was never kept or is forgotten."""
        return self._files.get(file_id)

    def by_path(self, file_path: str) -> StoredFile | None:
        """The file whose ``getFile`` path is ``file_path``, if it is still kept."""
        file_id = self._by_path.get(file_path)
        return None if file_id is None else self._files.get(file_id)
