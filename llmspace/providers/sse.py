"""Incremental Server-Sent Events parsing (the WHATWG event-stream format).

`iter_sse(chunks)` turns an iterator of byte chunks (as they arrive from the socket) into
`(event, data)` pairs as soon as each event's blank line arrives. Handles `\\n`, `\\r\\n`
and `\\r` line ends (also split across chunks), multi-line `data:`, comments (`:`), a
leading BOM, and a last event without its trailing blank line.

Linear in the size of the stream: each chunk is scanned once for line ends, and a line
that spans many chunks is accumulated in a `bytearray` (never re-scanned or re-copied per
chunk). A single line or event larger than `max_event_bytes` (default 32 MB) raises
`SSEEventTooLarge`, and a gzip body the server did not declare as such raises
`SSEUnreadable`; `http_events` reports both as errors.

`StreamCheck` lets an adapter's `parse_stream` report a stream in which nothing could be
read (no events, or no event that is valid JSON) as an error instead of an empty answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from .events import ErrorEvent

MAX_EVENT_BYTES = 32 * 1024 * 1024


class SSEUnreadable(Exception):
    """The body is not an event stream that can be read."""


class SSEEventTooLarge(SSEUnreadable):
    """One SSE line or event passed the size cap; the stream cannot be read safely."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"a single stream event is larger than {limit // (1024 * 1024)} MB, so the stream was stopped")
        self.limit = limit


def iter_sse(chunks: Iterable[bytes], max_event_bytes: int = MAX_EVENT_BYTES) -> Iterator[tuple[str, str]]:
    """Yield `(event_name, data)` per dispatched event; event_name is "" when absent."""
    partial = bytearray()  # the current line so far (it has no line end yet)
    event = ""
    data: list[bytes] = []
    size = 0  # bytes in `data`
    cr_pending = False  # the previous chunk ended with \r: a \n starting this one belongs to it
    first = True
    for chunk in chunks:
        if not chunk:
            continue
        if first:
            first = False
            if chunk[:3] == b"\xef\xbb\xbf":
                chunk = chunk[3:]
            elif chunk[:2] == b"\x1f\x8b":
                raise SSEUnreadable("the body is gzip-compressed data without a Content-Encoding: gzip header, "
                                    "not an event stream")
        if cr_pending and chunk[:1] == b"\n":
            chunk = chunk[1:]
        cr_pending = False
        if b"\r" in chunk:
            cr_pending = chunk[-1:] == b"\r"
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        nl = chunk.find(b"\n")
        if nl < 0:
            partial += chunk
            if len(partial) > max_event_bytes:
                raise SSEEventTooLarge(max_event_bytes)
            continue
        start = 0
        while nl >= 0:
            if partial:
                partial += chunk[start:nl]
                if len(partial) > max_event_bytes:
                    raise SSEEventTooLarge(max_event_bytes)
                line = bytes(partial)
                partial.clear()
            else:
                line = chunk[start:nl]
            start = nl + 1
            nl = chunk.find(b"\n", start)
            if not line:
                if data:
                    yield event, b"\n".join(data).decode("utf-8", "replace")
                event, data, size = "", [], 0
                continue
            if line[:5] == b"data:":
                v = line[5:]
                v = v[1:] if v[:1] == b" " else v
                size += len(v) + 1
                if size > max_event_bytes:
                    raise SSEEventTooLarge(max_event_bytes)
                data.append(v)
            elif line[:6] == b"event:":
                event = line[6:].strip().decode("utf-8", "replace")
            elif line == b"data":
                data.append(b"")
            # comments (":"), id:, retry: and unknown fields are ignored
        if start < len(chunk):
            partial += chunk[start:]
            if len(partial) > max_event_bytes:
                raise SSEEventTooLarge(max_event_bytes)
    if partial:
        line = bytes(partial)
        if line[:5] == b"data:":
            v = line[5:]
            data.append(v[1:] if v[:1] == b" " else v)
        elif line[:6] == b"event:":
            event = line[6:].strip().decode("utf-8", "replace")
        elif line == b"data":
            data.append(b"")
    if data:
        yield event, b"\n".join(data).decode("utf-8", "replace")


class StreamCheck:
    """What an adapter could read of a stream: `saw(data, value)` for each event (`value` is
    the parsed JSON or None), then `error()` is an `ErrorEvent` when nothing was readable."""

    def __init__(self) -> None:
        self.events = 0
        self.readable = 0
        self.first_unreadable: str | None = None

    def saw(self, data: str, value: Any) -> Any:
        self.events += 1
        if isinstance(value, dict):
            self.readable += 1
        elif self.first_unreadable is None:
            self.first_unreadable = data[:60]
        return value

    def error(self) -> ErrorEvent | None:
        if self.readable:
            return None
        if not self.events:
            return ErrorEvent(message="The server ended the stream without sending any model output.", retryable=True)
        n = self.events
        return ErrorEvent(message=f"The stream could not be read: {'none of its ' + str(n) + ' events was' if n > 1 else 'its only event is not'} "
                                  f"a JSON object (the first began {self.first_unreadable!r}).")
