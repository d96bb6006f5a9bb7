"""Thread files: bytes <-> `Thread`, with image blobs packed and restored.

Written as the original app writes them: 2-space indent, non-ASCII kept, key order kept,
no trailing newline. Inline images whose base64 text is 1,024 characters or more (message
`image_data` parts and tool output `image` parts, in the thread and in its run history) are
moved into a top-level `blobs` table (`blob:sha256:<hex>` references) and restored on read.
Validation errors name the JSON path of the bad value.

Pure functions, except `write_thread_file`: the one writer of thread files (the workspace
saves through it), with jsonio's atomic writer. `serialize_thread` raises `jsonio.UnsavableValueError` for
values no JSON file can hold (it names their JSON path).
"""

from __future__ import annotations

import gc
import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from ..errors import ValidationFailed
from ..jsonio import UnsavableValueError, dumps_pretty, loads_located, write_bytes_atomic
from .model import Thread
from .roundtrip import apply_key_order, recording_key_orders

BLOB_PREFIX = "blob:sha256:"
BLOB_MIN_CHARS = 1024


def error_path(loc: tuple[Any, ...]) -> str:
    """Turn a pydantic error location into a JSON path like `context.messages[2].content[0].text`."""
    out = ""
    prev: Any = None
    for part in loc:
        after_index, prev = isinstance(prev, int), part
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("user", "assistant", "text", "image_data", "image") and after_index:
            # discriminated-union tags pydantic inserts into the location (right after an index)
            continue
        elif isinstance(part, str) and ("[" in part or "." in part or part.startswith("function-")):
            continue
        elif part in _UNION_MEMBERS and out:
            continue  # which member of a union (e.g. Number = int | float) pydantic tried
        else:
            out += f".{part}" if out else str(part)
    return out or "(root)"


_UNION_MEMBERS = frozenset({"int", "float", "str", "bool", "none", "dict", "list", "constrained-int", "constrained-float"})


def validation_problems(exc: ValidationError) -> list[tuple[str, str]]:
    """(JSON path, message) per problem; one per path (a union reports each member it tried)."""
    seen: dict[str, str] = {}
    for e in exc.errors(include_url=False):
        seen.setdefault(error_path(tuple(e["loc"])), e["msg"])
    return list(seen.items())


def _message_lists(data: dict[str, Any]) -> Iterator[list[Any]]:
    """The message lists of a thread dict: the working context and every run snapshot."""
    ctx = data.get("context")
    if isinstance(ctx, dict) and isinstance(ctx.get("messages"), list):
        yield ctx["messages"]
    history = data.get("runHistory")
    if isinstance(history, list):
        for run in history:
            snap = run.get("thread") if isinstance(run, dict) else None
            ctx = snap.get("context") if isinstance(snap, dict) else None
            if isinstance(ctx, dict) and isinstance(ctx.get("messages"), list):
                yield ctx["messages"]


def _parts_of(content: Any, kind: str) -> Iterator[dict[str, Any]]:
    if isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and part.get("type") == kind and isinstance(part.get("data"), str):
                yield part


def _image_parts(data: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every image part with string data of every message of a thread dict: message
    `{type: image_data}` parts and tool output `{type: image}` parts."""
    for messages in _message_lists(data):
        for msg in messages:
            if not isinstance(msg, dict):
                continue
            yield from _parts_of(msg.get("content"), "image_data")
            calls = msg.get("toolCalls")
            for call in calls if isinstance(calls, list) else ():
                output = call.get("output") if isinstance(call, dict) else None
                if isinstance(output, dict):
                    yield from _parts_of(output.get("content"), "image")


def pack_blobs(data: dict[str, Any]) -> dict[str, Any]:
    """Move large inline images into `blobs` (in place); returns `data`."""
    blobs: dict[str, str] = {}
    for part in _image_parts(data):
        b64 = part["data"]
        if len(b64) >= BLOB_MIN_CHARS and not b64.startswith(BLOB_PREFIX):
            digest = hashlib.sha256(b64.encode("ascii", "surrogateescape")).hexdigest()
            blobs.setdefault(digest, b64)
            part["data"] = BLOB_PREFIX + digest
    if blobs:
        data.pop("blobs", None)
        data["blobs"] = blobs
    return data


def unpack_blobs(data: dict[str, Any]) -> dict[str, Any]:
    """Restore `blob:sha256:` references from the `blobs` table and drop the table (in place)."""
    blobs = data.pop("blobs", None)
    if not isinstance(blobs, dict):
        return data
    for part in _image_parts(data):
        ref = part["data"]
        if ref.startswith(BLOB_PREFIX):
            b64 = blobs.get(ref[len(BLOB_PREFIX):])
            if isinstance(b64, str):
                part["data"] = b64
    return data


def thread_from_data(data: Any, source: str = "thread") -> Thread:
    """Validate parsed JSON as a Thread; errors name the JSON path of the bad value."""
    if not isinstance(data, dict):
        raise ValidationFailed(source, [("(root)", "a thread must be a JSON object")])
    if "blobs" in data:
        unpack_blobs(data)
    with recording_key_orders() as reordered:
        try:
            thread = Thread.model_validate(data)
        except ValidationError as exc:
            raise ValidationFailed(source, validation_problems(exc)) from None
    thread._has_custom_order = bool(reordered)
    return thread


def parse_thread(raw: bytes, source: str = "thread") -> Thread:
    """Parse and validate thread bytes (GC paused while building the objects)."""
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        # Nesting of 255-1,024 levels is reported when the thread is saved (serialize_thread
        # names its JSON path and nothing is written), so opening skips that costly check.
        data = loads_located(raw, source, check_depth=False)
        return thread_from_data(data, source)
    finally:
        if gc_was_on:
            gc.enable()


def thread_to_data(thread: Thread) -> dict[str, Any]:
    """The JSON-ready dict of a thread: only keys that were set, source key order kept, blobs not packed."""
    data = thread.model_dump(exclude_unset=True, by_alias=True)
    if thread._has_custom_order:
        data = apply_key_order(thread, data)
    return data


def serialize_thread(thread: Thread) -> bytes:
    """Bytes exactly as the original app would write them (blobs packed)."""
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        data = pack_blobs(thread_to_data(thread))
        return dumps_pretty(data)
    finally:
        if gc_was_on:
            gc.enable()


def write_thread_file(path: Path, thread: Thread, *, shown: str | None = None,
                      unchanged: Callable[[bytes], bool] | None = None) -> bytes | None:
    """The one writer of thread files: `thread` serialised as the original app writes it
    (`serialize_thread`) and written atomically through jsonio (temp file in the same folder,
    fsync, rename; a symbolic link is written through). When `unchanged(data)` says the file
    already holds these bytes nothing is written and None is returned; otherwise the bytes
    written. A value no JSON file can hold raises `UnsavableValueError` naming the file
    (`shown`, default the path) and the value's JSON path."""
    try:
        data = serialize_thread(thread)
    except UnsavableValueError as exc:
        raise exc.for_file(path, shown) from None
    if unchanged is not None and unchanged(data):
        return None
    write_bytes_atomic(path, data)
    return data


def clone_thread(thread: Thread) -> Thread:
    """A deep, independent copy that keeps key order and set-ness (for snapshots and undo)."""
    return thread_from_data(orjson.loads(orjson.dumps(thread_to_data(thread))))
