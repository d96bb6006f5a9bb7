"""Elicitation: a server asks the user for input during a tool call (MCP `elicitation/create`,
or an input request of a 2026-07-28 multi-round-trip call).

The hub always declares elicitation (form and URL) to servers, so they offer the tools that
use it. Who answers is the caller's `Elicitor`, called on the thread that made the tool call
(`McpHub.call_tool(..., elicit=…)`; a run passes `RunOptions.elicit`):

- the command line asks on a terminal (`commands/elicit_terminal.py`);
- without one (standard input not a terminal), with `--no-input`, in evaluations and matrix
  runs, the request is declined (`Decline`) — the default when the caller gives none;
- the app shows a dialog built from `ElicitationRequest` (`ui/mcp_elicitation.py`).

A form whose schema goes beyond what MCP elicitation allows (`unsupported_schema`) is
declined with a note without asking. After the call, the tool result gets a note saying that
the server asked and what became of it (`note`); the answers themselves are never recorded
(they may hold personal data). No `mcp` import.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

Action = Literal["accept", "decline", "cancel"]
FORMATS = ("email", "uri", "date", "date-time")


@dataclass(frozen=True)
class ElicitationRequest:
    """What a server asks. `mode` "form": fill `schema`; "url": open `url` (after consent)."""

    server: str
    tool: str
    mode: Literal["form", "url"]
    message: str
    schema: dict[str, Any] = field(default_factory=dict)
    url: str = ""

    @property
    def origin(self) -> str:
        """`scheme://host[:port]` of a URL-mode request, shown in full before any browser opens."""
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else self.url


@dataclass(frozen=True)
class ElicitationAnswer:
    action: Action
    content: dict[str, Any] | None = None
    reason: str = ""  # why it was declined or cancelled without the user (goes into the note)


class Elicitor(Protocol):
    """Answers an elicitation; may block (it runs on the calling thread). `cancelled()` turns
    True when the run is stopped: return `cancel` then."""

    def __call__(self, request: ElicitationRequest, cancelled: Callable[[], bool]) -> ElicitationAnswer: ...


class Decline:
    """An `Elicitor` that declines every request, saying why."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __call__(self, request: ElicitationRequest, cancelled: Callable[[], bool]) -> ElicitationAnswer:
        return ElicitationAnswer("decline", reason=self.reason)


NOBODY = Decline("nobody can answer here (no terminal, --no-input, or an evaluation or matrix run)")


def _property_problem(name: str, prop: Any) -> str | None:
    if not isinstance(prop, dict):
        return f"field {name!r} is not a schema"
    kind = prop.get("type")
    if kind == "string":
        fmt = prop.get("format")
        if fmt is not None and fmt not in FORMATS:
            return f"field {name!r} has format {fmt!r}"
        for key in ("enum", "oneOf"):
            if key in prop and not _choices(prop):
                return f"field {name!r} has an {key} that is not a list of values"
        return None
    if kind in ("number", "integer", "boolean"):
        return None
    if kind == "array":
        items = prop.get("items")
        if isinstance(items, dict) and _choices(items):
            return None
        return f"field {name!r} is a list without a fixed set of values"
    return f"field {name!r} has type {kind!r}"


def _choices(prop: dict[str, Any]) -> list[tuple[str, str]]:
    """(value, title) of an enum, a titled enum (`oneOf`/`anyOf` of `const`/`title`), or []."""
    if isinstance(prop.get("enum"), list):
        titles = prop.get("enumNames") if isinstance(prop.get("enumNames"), list) else None
        values = [str(v) for v in prop["enum"]]
        return list(zip(values, [str(t) for t in titles], strict=False)) if titles and len(titles) == len(values) else [
            (v, v) for v in values]
    options = prop.get("oneOf", prop.get("anyOf"))
    if isinstance(options, list) and options and all(isinstance(o, dict) and "const" in o for o in options):
        return [(str(o["const"]), str(o.get("title", o["const"]))) for o in options]
    return []


def choices(prop: dict[str, Any]) -> list[tuple[str, str]]:
    """The fixed values of a field (a multi-select array's come from its `items`)."""
    items = prop.get("items")
    return _choices(items) if prop.get("type") == "array" and isinstance(items, dict) else _choices(prop)


def unsupported_schema(schema: Any) -> str | None:
    """Why a form's schema cannot be shown (anything beyond MCP elicitation's flat object of
    strings, numbers, booleans, enums and multi-select arrays), or None."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return "the form is not an object of fields"
    props = schema.get("properties") or {}
    if not isinstance(props, dict):
        return "the form's properties are not an object"
    for name, prop in props.items():
        problem = _property_problem(str(name), prop)
        if problem:
            return problem
    return None


_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")


def convert(prop: dict[str, Any], text: str) -> Any:
    """A typed value for one field from what the user typed; ValueError says what is wrong."""
    kind = prop.get("type")
    text = text.strip()
    if kind == "boolean":
        if text.lower() in ("y", "yes", "true", "1"):
            return True
        if text.lower() in ("n", "no", "false", "0"):
            return False
        raise ValueError("answer yes or no")
    if kind in ("number", "integer"):
        try:
            value: float | int = int(text) if kind == "integer" else float(text)
        except ValueError:
            raise ValueError(f"enter {'a whole number' if kind == 'integer' else 'a number'}") from None
        if "minimum" in prop and value < prop["minimum"]:
            raise ValueError(f"at least {prop['minimum']}")
        if "maximum" in prop and value > prop["maximum"]:
            raise ValueError(f"at most {prop['maximum']}")
        return value
    values = [v for v, _t in choices(prop)]
    if kind == "array":
        picked = [p.strip() for p in text.split(",") if p.strip()]
        bad = [p for p in picked if p not in values]
        if bad:
            raise ValueError(f"choose from {', '.join(values)}")
        return picked
    if values and text not in values:
        raise ValueError(f"choose one of {', '.join(values)}")
    fmt = prop.get("format")
    checks = {"email": _EMAIL, "date": _DATE, "date-time": _DATE_TIME}
    if fmt in checks and not checks[fmt].match(text):
        raise ValueError(f"enter a valid {fmt}")
    if fmt == "uri" and not urlsplit(text).scheme:
        raise ValueError("enter a URI with a scheme (https://…)")
    if "minLength" in prop and len(text) < prop["minLength"]:
        raise ValueError(f"at least {prop['minLength']} characters")
    if "maxLength" in prop and len(text) > prop["maxLength"]:
        raise ValueError(f"at most {prop['maxLength']} characters")
    return text


def note(request: ElicitationRequest, answer: ElicitationAnswer) -> str:
    """The line the tool result gets: that the server asked and what became of it (never the answers)."""
    asked = f"The MCP server {request.server!r} asked for input during this call ({request.mode}: {request.message!r})"
    if answer.action == "accept":
        return f"[{asked}; answered.]"
    verb = "declined" if answer.action == "decline" else "cancelled"
    return f"[{asked}; {verb}{': ' + answer.reason if answer.reason else ' by the user'}.]"
