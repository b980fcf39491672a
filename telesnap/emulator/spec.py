"""The Bot API's methods and parameters, and the checks every call goes through.

The facts come from ``botapi_methods.json`` (derived by ``scripts/derive_botapi.py``
from the Bot API 10.1 spec of PaulSonOfLars/telegram-bot-api-spec, MIT licence).

>>> find_method("SENDMESSAGE").name
'sendMessage'
>>> coerce_params(find_method("sendMessage"), {"chat_id": "-100", "text": "hi"})
{'chat_id': -100, 'text': 'hi'}
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from .errors import MESSAGE_TEXT_EMPTY, ApiError, bad_request

DATA_FILE = "botapi_methods.json"
ATTACHED = "_attached"
"""The key under which a handler finds every uploaded file part of its call, by field name
(for ``attach://`` references inside JSON values, such as an InputMedia's ``media``)."""
SCALAR_TYPES = frozenset({"String", "Integer", "Float", "Boolean"})
MISSING_WORDS = {("sendMessage", "text"): MESSAGE_TEXT_EMPTY}
"""Telegram's words for a required parameter left out, where they are not ``<name> is empty``."""


@dataclass(frozen=True)
class Param:
    """One parameter of a method: its name, accepted types and whether it is required."""

    name: str
    types: tuple[str, ...]
    required: bool


@dataclass(frozen=True)
class Method:
    """One Bot API method with its parameters and return types."""

    name: str
    params: tuple[Param, ...]
    returns: tuple[str, ...]


@dataclass(frozen=True)
class UploadedFile:
    """A file the bot uploaded in a multipart request."""

    field: str
    file_name: str
    size: int
    content_type: str
    content: bytes = dataclasses.field(default=b"", repr=False, compare=False)


@cache
def load_methods() -> dict[str, Method]:
    """Return every method of the spec, keyed by its lower-case name."""
    raw = json.loads(resources.files(__package__).joinpath(DATA_FILE).read_text("utf-8"))
    methods: dict[str, Method] = {}
    for name, method in raw["methods"].items():
        params = tuple(
            Param(param["name"], tuple(param["types"]), param["required"])
            for param in method["params"]
        )
        methods[name.lower()] = Method(name, params, tuple(method["returns"]))
    return methods


def find_method(name: str) -> Method:
    """Return the method called ``name`` (case-insensitive, as in Telegram).

    Raises :class:`ApiError` 404 ``Not Found`` for a name the Bot API lacks.
    """
    method = load_methods().get(name.lower())
    if method is None:
        raise ApiError(404, "Not Found")
    return method


def coerce_params(method: Method, raw: dict[str, Any]) -> dict[str, Any]:
    """Check ``raw`` against ``method`` and return it with values of the declared types.

    Form fields arrive as strings; complex values arrive JSON-encoded. Unknown
    parameters are dropped, as Telegram ignores them.
    """
    coerced: dict[str, Any] = {}
    for param in method.params:
        if param.name not in raw or raw[param.name] is None:
            if param.required:
                missing = MISSING_WORDS.get((method.name, param.name), f"{param.name} is empty")
                raise bad_request(missing)
            continue
        coerced[param.name] = _coerce(param, raw[param.name])
    return coerced


def _coerce(param: Param, value: Any) -> Any:
    if isinstance(value, UploadedFile):
        if "InputFile" in param.types:
            return value
        raise bad_request(f"parameter {param.name!r} can't be a file")
    errors: list[str] = []
    for type_name in _order(param.types):
        try:
            return _coerce_to(type_name, value)
        except ValueError as error:
            errors.append(str(error))
    wanted = " or ".join(param.types)
    raise bad_request(f"parameter {param.name!r} must be {wanted}")


def _order(types: tuple[str, ...]) -> list[str]:
    # Try Integer before String, so chat_id "-100" becomes a number.
    return sorted(types, key=lambda type_name: type_name == "String")


def _coerce_to(type_name: str, value: Any) -> Any:
    if type_name == "String":
        if isinstance(value, str):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        raise ValueError("not a string")
    if type_name == "Integer":
        return _integer(value)
    if type_name == "Float":
        if isinstance(value, str):
            return float(value)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        raise ValueError("not a number")
    if type_name == "Boolean":
        return _boolean(value)
    if type_name == "InputFile":
        raise ValueError("not a file")
    return _json_value(type_name, value)


def _integer(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError("a boolean is not an integer")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        return int(value)
    raise ValueError("not an integer")


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in {"true", "1", "false", "0"}:
        return value.lower() in {"true", "1"}
    if isinstance(value, int) and value in {0, 1}:
        return bool(value)
    raise ValueError("not a boolean")


def _json_value(type_name: str, value: Any) -> Any:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise ValueError(f"can't parse {type_name} JSON") from None
    expected: type = list if type_name.startswith("Array of") else dict
    if not isinstance(value, expected):
        raise ValueError(f"{type_name} must be a JSON {expected.__name__}")
    return value
