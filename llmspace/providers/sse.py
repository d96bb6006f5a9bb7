"""Incremental Server-Sent Events parsing (the WHATWG event-stream format).

`iter_sse(chunks)` turns an iterator of byte chunks (as they arrive from the socket) into
`(event, data)` pairs as soon as each event's blank line arrives. Handles `\\n`, `\\r\\n`
and `\\r` line ends, multi-line `data:`, comments (`:`), and a last event without its
trailing blank line. Used by the three adapters in this package.
"""

from __future__ import annotations

from typing import Iterable, Iterator


def iter_sse(chunks: Iterable[bytes]) -> Iterator[tuple[str, str]]:
    """Yield `(event_name, data)` per dispatched event; event_name is "" when absent."""
    buf = b""
    event = ""
    data: list[bytes] = []
    for chunk in chunks:
        if not chunk:
            continue
        buf = buf + chunk if buf else chunk
        if b"\r" in buf:
            # normalise line ends; keep a trailing lone \r until we know if \n follows
            tail = b""
            if buf.endswith(b"\r"):
                buf, tail = buf[:-1], b"\r"
            buf = buf.replace(b"\r\n", b"\n").replace(b"\r", b"\n") + tail
        start = 0
        while True:
            nl = buf.find(b"\n", start)
            if nl < 0:
                break
            line = buf[start:nl]
            start = nl + 1
            if not line:
                if data:
                    yield event, b"\n".join(data).decode("utf-8", "replace")
                event, data = "", []
                continue
            if line[:5] == b"data:":
                v = line[5:]
                data.append(v[1:] if v[:1] == b" " else v)
            elif line[:6] == b"event:":
                event = line[6:].strip().decode("utf-8", "replace")
            elif line[:1] == b":":
                pass
            elif b":" not in line and line == b"data":
                data.append(b"")
            # id:, retry: and unknown fields are ignored
        buf = buf[start:]
    if buf.strip():
        for line in buf.replace(b"\r", b"").split(b"\n"):
            if line[:5] == b"data:":
                v = line[5:]
                data.append(v[1:] if v[:1] == b" " else v)
            elif line[:6] == b"event:":
                event = line[6:].strip().decode("utf-8", "replace")
    if data:
        yield event, b"\n".join(data).decode("utf-8", "replace")
