"""The one atomic writer and the JSON readers.

`write_bytes_atomic` / `write_json_atomic`: temp file in the destination folder, write,
flush, fsync, `os.replace`; on any failure the temp file is removed and the destination is
untouched. `read_json` reports malformed JSON with path, line and column.
Every file the app writes goes through here.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import orjson

from .errors import MalformedJsonError, UserFacingError


def write_bytes_atomic(path: Path | str, data: bytes) -> None:
    """Replace `path` with `data` atomically (old or new content, never a torn file)."""
    path = Path(path)
    try:  # a read-only or full folder fails here, before any temp file exists
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _write_error(path, exc) from exc
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if path.exists():
            try:
                os.chmod(tmp, path.stat().st_mode & 0o777)
            except OSError:
                pass
        else:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise _write_error(path, exc) from exc
        raise


def _write_error(path: Path, exc: OSError) -> UserFacingError:
    kept = "the previous file was kept" if os.path.lexists(path) else "nothing was written"
    return UserFacingError(
        f"Could not write {path}: {exc.strerror or exc}.",
        hint=f"Check free disk space and permissions; {kept}.",
    )


def dumps_pretty(value: Any, *, trailing_newline: bool = False) -> bytes:
    """2-space indented UTF-8 JSON, non-ASCII kept, key order kept (as JSON.stringify(v, null, 2))."""
    try:
        out = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except TypeError:
        # orjson refuses ints beyond 64 bits and non-str keys; fall back to the stdlib.
        out = json.dumps(value, indent=2, ensure_ascii=False).encode("utf-8")
    return out + b"\n" if trailing_newline else out


def write_json_atomic(path: Path | str, value: Any, *, trailing_newline: bool = False) -> None:
    """Write `value` as pretty JSON atomically. Thread files: no trailing newline; settings: one."""
    write_bytes_atomic(path, dumps_pretty(value, trailing_newline=trailing_newline))


def _position(data: bytes, pos: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, pos) + 1
    col = pos - (data.rfind(b"\n", 0, pos) + 1) + 1
    return line, col


def loads_located(data: bytes, path: Path | str = "<input>") -> Any:
    """Parse JSON bytes; malformed input raises MalformedJsonError with line and column."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        line, col = _position(data, exc.start)
        raise MalformedJsonError(path, line, col, "the file is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise MalformedJsonError(path, exc.lineno, exc.colno, exc.msg) from None


def read_json(path: Path | str) -> Any:
    """Read and parse a JSON file, with a clear error for unreadable or malformed files."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UserFacingError(f"{path} does not exist.") from None
    except IsADirectoryError:
        raise UserFacingError(f"{path} is a folder, not a JSON file.") from None
    except OSError as exc:
        raise UserFacingError(f"Could not read {path}: {exc.strerror or exc}.") from None
    return loads_located(data, path)
