"""The one internal span shape every trace source is normalised to, and small value readers.

A `Span` is one row of a trace (a Langfuse observation, an OTLP span, a Phoenix span): its
kind (`generation`, `tool`, `agent`, `span`, `event`, …), its place in the tree, times in
epoch milliseconds, the chat messages it carries (`Msg`, made of `Part`s), tool-call fields,
usage and error. `mapping.py` turns a list of spans into a thread.

Pure: no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import orjson

PartKind = Literal["text", "image", "tool_call", "tool_result", "reasoning"]


@dataclass
class Part:
    """One piece of a message: text, an inline image (base64), a tool call, a tool result or reasoning."""

    kind: PartKind
    text: str = ""
    mime: str = ""
    data: str = ""  # base64 of an image
    call_id: str = ""
    name: str = ""
    arguments: Any = None
    is_error: bool = False


@dataclass
class Msg:
    """A chat message as a source wrote it, normalised: role (`system`, `developer`, `user`,
    `assistant`, `tool`) and parts."""

    role: str
    parts: list[Part] = field(default_factory=list)

    def text(self) -> str:
        return "\n".join(p.text for p in self.parts if p.kind == "text" and p.text)

    def key(self) -> tuple[str, ...]:
        """What makes two user turns the same turn (their texts and images)."""
        return tuple(p.text if p.kind == "text" else p.data for p in self.parts if p.kind in ("text", "image"))


@dataclass
class SpanUsage:
    input: float = 0
    output: float = 0
    cache_read: float = 0
    cache_write: float = 0
    total_tokens: float = 0
    cost_input: float = 0
    cost_output: float = 0
    cost_total: float = 0

    def empty(self) -> bool:
        return not any((self.input, self.output, self.cache_read, self.cache_write, self.total_tokens, self.cost_total))


@dataclass
class Span:
    id: str
    trace_id: str
    parent_id: str | None = None
    kind: str = "span"  # generation | tool | agent | span | event | chain | … (lowercase)
    name: str = ""
    start_ms: float | None = None
    end_ms: float | None = None
    first_token_ms: float | None = None
    model: str | None = None
    provider: str | None = None
    inputs: list[Msg] | None = None  # chat-shaped input, when the source had one
    input_value: Any = None  # the input as written (a tool's arguments, a generation's plain prompt)
    system: list[str] = field(default_factory=list)  # system instructions given apart from the messages
    outputs: list[Msg] | None = None
    output_value: Any = None
    tool_name: str | None = None
    tool_call_id: str | None = None
    usage: SpanUsage | None = None
    is_error: bool = False
    error_message: str = ""
    metadata: Any = None
    order: int = 0  # position in the file, to keep file order among equal times


# -- value readers --------------------------------------------------------------------------


def first_string(*values: Any) -> str | None:
    """The first value that is a string with something other than spaces in it."""
    for value in values:
        if isinstance(value, str) and value.strip():
            return value
    return None


def number(value: Any) -> float:
    """A finite number at least 0 from a number or numeric string; 0 otherwise."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int | float):
        n = float(value)
    elif isinstance(value, str):
        try:
            n = float(value.strip())
        except ValueError:
            return 0
    else:
        return 0
    return n if math.isfinite(n) and n > 0 else 0


def as_record(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def decode_text(value: Any) -> Any:
    """A string that starts with `{`, `[` or `"` decoded as JSON (the original's rule); other values as they are."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "[", '"'):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def iso_ms(value: Any) -> float | None:
    """Epoch milliseconds of an ISO 8601 time or an epoch number (s, ms, µs or ns by size); None when unreadable."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float) or (isinstance(value, str) and value.strip().isdigit()):
        n = float(value)
        if not math.isfinite(n) or n <= 0:
            return None
        for scale in (1e3, 1, 1e-3, 1e-6):  # seconds, ms, µs, ns
            ms = n * scale
            if ms < 1e14:
                return ms
        return None
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
    if "." in text:  # Python before 3.11's fromisoformat cannot take nanoseconds: keep 6 digits
        head, _, rest = text.partition(".")
        digits = "".join(c for c in rest if c.isdigit())
        zone = rest[len(digits):]
        text = f"{head}.{digits[:6].ljust(6, '0')}{zone}" if digits else head + zone
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp() * 1000


def iso_text(ms: float) -> str:
    """An epoch-milliseconds time as ISO 8601 in UTC with milliseconds (`2026-01-02T03:04:05.678Z`)."""
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def json_text(value: Any) -> str:
    """A value as text: strings as they are, anything else as indented JSON."""
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode("utf-8")
    except TypeError:
        return str(value)
