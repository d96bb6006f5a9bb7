"""The one atomic writer and the one safe reader of the app's files.

Writing: `write_bytes_atomic` / `write_json_atomic` put the data in a temp file in the
destination's folder (a symlinked destination is written through to its target), flush,
fsync and `os.replace` it; on any failure the temp file is removed and the destination is
untouched. The temp files themselves — their names, the lock a writer holds while filling
one, and the sweep that removes those a killed writer left behind — are
`llmspace/temp_files.py`. Values that cannot be stored (see
`llmspace/jsoncheck.py`) raise `UnsavableValueError` naming their JSON path; nothing is
written.

Reading: `read_file_bytes` opens without blocking, refuses anything that is not a regular
file (named pipe, device, socket, folder) and files over a size cap, and reads at most
cap + 1 bytes; `read_json` adds `loads_located`, which reports malformed JSON with path,
line and column, and JSON the app cannot hold (too deep, lone surrogates, huge integers)
with its JSON path. Every file the app writes goes through here, and every JSON, thread
and settings file it reads. `load_yaml` is `yaml.safe_load` with aliases bounded ("billion
laughs"), for the YAML a user or a stranger wrote (evaluation files, datasets, SKILL.md).
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from .errors import MalformedJsonError, UserFacingError
from .jsoncheck import DEPTH_REASON, deep_position, first_problem, parse_int, printable
from .temp_files import locked_temp, sweep_now_and_then

FILE_MAX_BYTES = 256 * 1024 * 1024  # threads, imports, results
SETTINGS_MAX_BYTES = 8 * 1024 * 1024  # settings and UI state


class UnreadableFileError(UserFacingError):
    """A file that was not read. `reason` says why without naming it ("it is a folder, …")."""

    def __init__(self, message: str, reason: str, *, hint: str | None = None, missing: bool = False) -> None:
        super().__init__(message, hint=hint)
        self.reason = reason
        self.missing = missing


class UnsupportedJsonError(MalformedJsonError):
    """Well-formed JSON holding something the app cannot keep (see llmspace/jsoncheck.py)."""

    def __init__(self, path: Path | str, json_path: str, reason: str, line: int = 0, column: int = 0) -> None:
        super().__init__(path, line, column, reason)
        self.json_path = json_path
        where = f" (line {line}, column {column})" if line else ""
        self.summary = f"unsupported JSON at {json_path}{where}: {reason}"
        self.message = f"{self.path}: {self.summary}."


class UnsavableValueError(UserFacingError):
    """A value that cannot be written as JSON; names its JSON path. Nothing was written."""

    def __init__(self, json_path: str, reason: str, where: str | None = None, kept: bool = False) -> None:
        self.json_path = json_path
        self.reason = reason
        prefix = f"{where}: " if where else ""
        super().__init__(f"{prefix}cannot save the value at {json_path}: {reason}.",
                         hint=f"Change that value and try again; {'the previous file was kept' if kept else 'nothing was written'}.")

    def for_file(self, path: Path | str, shown: str | None = None) -> UnsavableValueError:
        """The same error naming the file (`shown`, default the path) it was meant for."""
        return UnsavableValueError(self.json_path, self.reason, shown or str(path), os.path.lexists(path))


# -- writing -------------------------------------------------------------------------------
def _write_target(path: Path) -> Path:
    """Where the bytes go: a symbolic link is written through to the file it points at."""
    return Path(os.path.realpath(path)) if os.path.islink(path) else path


def write_bytes_atomic(path: Path | str, data: bytes, *, mode: int | None = None) -> None:
    """Replace `path` with `data` atomically (old or new content, never a torn file).

    The file gets `mode` when given (`0o600` for a file holding a secret: the temp file is
    created owner-only, so the content is never readable by others, not even for a moment);
    otherwise an existing file's mode is kept and a new file gets 0644 — both without the
    group and other bits in a folder only its owner may enter (settings/, run/:
    `paths.private_folder`), so every file there is owner-only whoever writes it."""
    path = Path(path)
    target = _write_target(path)
    try:  # a read-only or full folder fails here, before any temp file exists
        target.parent.mkdir(parents=True, exist_ok=True)
        sweep_now_and_then(target.parent)
        fd, tmp = locked_temp(target)
    except OSError as exc:
        raise _write_error(path, exc) from exc
    f = os.fdopen(fd, "wb")
    try:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
        if os.name == "nt":  # pragma: no cover - Windows cannot rename an open file
            f.close()
        # mkstemp created it 0600 (os.open with O_CREAT | O_EXCL, 0o600)
        os.chmod(tmp, mode if mode is not None else _kept_mode(target))
        os.replace(tmp, target)  # POSIX: still locked until closed below
    except BaseException as exc:
        f.close()
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise _write_error(path, exc) from exc
        raise
    finally:
        f.close()


def _kept_mode(target: Path) -> int:
    """The mode a rewritten `target` keeps (0644 when new), owner-only in an owner-only folder."""
    try:
        current = target.stat().st_mode & 0o777
    except OSError:
        current = 0o644
    try:
        private = os.stat(target.parent).st_mode & 0o077 == 0
    except OSError:
        private = False
    return current & 0o700 if private else current


def _write_error(path: Path, exc: OSError) -> UserFacingError:
    kept = "the previous file was kept" if os.path.lexists(path) else "nothing was written"
    return UserFacingError(
        f"Could not write {path}: {exc.strerror or exc}.",
        hint=f"Check free disk space and permissions; {kept}.",
    )


def dumps_pretty(value: Any, *, trailing_newline: bool = False) -> bytes:
    """2-space indented UTF-8 JSON, non-ASCII kept, key order kept (as JSON.stringify(v, null, 2)).

    A value that cannot be stored (lone surrogates, nesting deeper than the reader accepts,
    integers of more than 4,300 digits) raises `UnsavableValueError` with its JSON path."""
    try:
        out = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except TypeError:
        # orjson refuses ints beyond 64 bits, lone surrogates and deep nesting: say which,
        # or fall back to the stdlib for what it can write (big integers, non-str keys).
        problem = first_problem(value)
        if problem is not None:
            raise UnsavableValueError(*problem) from None
        try:
            out = json.dumps(value, indent=2, ensure_ascii=False).encode("utf-8")
        except RecursionError:
            raise UnsavableValueError("(root)", DEPTH_REASON) from None
    return out + b"\n" if trailing_newline else out


def write_json_atomic(path: Path | str, value: Any, *, trailing_newline: bool = False, mode: int | None = None) -> None:
    """Write `value` as pretty JSON atomically. Thread files: no trailing newline; settings: one.
    `mode` as for `write_bytes_atomic`."""
    try:
        data = dumps_pretty(value, trailing_newline=trailing_newline)
    except UnsavableValueError as exc:
        raise exc.for_file(path) from None
    write_bytes_atomic(path, data, mode=mode)


# -- reading -------------------------------------------------------------------------------
def _special_kind(mode: int) -> str | None:
    """What a non-regular file is, in words (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):,.0f} MB" if n >= 1024 * 1024 else f"{n:,} bytes"


def _refuse(shown: str, st: os.stat_result, max_bytes: int) -> None:
    kind = _special_kind(st.st_mode)
    if kind == "a folder":
        raise UnreadableFileError(f"{shown} is a folder, not a file.", "it is a folder, not a file")
    if kind is not None:
        raise UnreadableFileError(f"{shown} is {kind}, not a regular file; it was not read.",
                                  f"it is {kind}, not a regular file",
                                  hint="Point at a regular file (or replace it with one).")
    if st.st_size > max_bytes:
        _too_big(shown, max_bytes)


def _too_big(shown: str, max_bytes: int) -> None:
    raise UnreadableFileError(f"{shown} is larger than {_mb(max_bytes)}, the most this app reads; it was not read.",
                              f"it is larger than {_mb(max_bytes)}, the most this app reads",
                              hint="Split it into smaller files or remove large parts (such as embedded images).")


_READ_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
               | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))


def _open_regular(path: str, label: str, max_bytes: int) -> tuple[int, os.stat_result]:
    """Open a regular file of at most `max_bytes` without blocking (a FIFO, device or socket
    is refused before it is opened and again after, by fstat); the fd and its stat."""
    try:
        _refuse(label, os.stat(path), max_bytes)
        fd = os.open(path, _READ_FLAGS)
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise UnreadableFileError(f"{label} does not exist.", f"could not read it: {exc.strerror or 'it does not exist'}",
                                  missing=True) from None
    except IsADirectoryError:
        raise UnreadableFileError(f"{label} is a folder, not a file.", "it is a folder, not a file") from None
    except OSError as exc:
        why = exc.strerror or str(exc)
        raise UnreadableFileError(f"Could not read {label}: {why}.", f"could not read it: {why}") from None
    try:
        st = os.fstat(fd)
        _refuse(label, st, max_bytes)  # the file may have been swapped since the stat
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def open_regular_file(path: Path | str, *, shown: str | None = None) -> BinaryIO:
    """A binary file object for streaming a *regular* file (any size), or
    `UnreadableFileError`. Like `read_file_bytes` it never blocks on a named pipe or device;
    reads are switched back to blocking once the file is known to be regular. For readers
    that stream (the read tool, skill frontmatter scans, template includes)."""
    path = os.fspath(path)
    fd, _st = _open_regular(path, shown if shown is not None else path, sys.maxsize)
    try:
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_file_bytes(path: Path | str, *, max_bytes: int = FILE_MAX_BYTES, shown: str | None = None) -> bytes:
    """The bytes of a regular file of at most `max_bytes`, or `UnreadableFileError`.

    Never blocks: named pipes, devices and sockets are refused before anything is read
    (the file is opened non-blocking and checked again with fstat), and at most
    `max_bytes + 1` bytes are read. Symbolic links are followed. `shown` is how messages
    name the file (default: the path)."""
    path = os.fspath(path)
    label = shown if shown is not None else path
    fd, st = _open_regular(path, label, max_bytes)
    try:
        chunks: list[bytes] = []
        left = max_bytes + 1
        want = min(st.st_size, max_bytes) + 1
        while left > 0:
            chunk = os.read(fd, min(left, max(want, 1 << 16)))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        if left <= 0:  # it grew past the cap while being read
            _too_big(label, max_bytes)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    except OSError as exc:
        why = exc.strerror or str(exc)
        raise UnreadableFileError(f"Could not read {label}: {why}.", f"could not read it: {why}") from None
    finally:
        os.close(fd)


def _position(data: bytes, pos: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, pos) + 1
    col = pos - (data.rfind(b"\n", 0, pos) + 1) + 1
    return line, col


def _too_deep(data: bytes, path: Path | str, fallback: tuple[int, int]) -> UnsupportedJsonError:
    found = deep_position(data)
    if found is None:
        return UnsupportedJsonError(path, "(root)", DEPTH_REASON, *fallback)
    pos, json_path = found
    return UnsupportedJsonError(path, json_path, DEPTH_REASON, *_position(data, pos))


def _check(value: Any, data: bytes, path: Path | str) -> Any:
    """`value` if it stays within the limits the writer can keep (see jsoncheck.py)."""
    if isinstance(value, (dict, list)) and len(data) > 500:  # 254 levels take at least 508 bytes
        try:
            orjson.dumps(value)  # fast: fails only when nested too deeply
        except orjson.JSONEncodeError:
            problem = first_problem(value)
            if problem is not None:
                raise UnsupportedJsonError(path, *problem) from None
    return value


def loads_located(data: bytes, path: Path | str = "<input>", *, check_depth: bool = True) -> Any:
    """Parse JSON bytes. Malformed input raises `MalformedJsonError` with line and column;
    JSON the app cannot keep raises `UnsupportedJsonError` with its JSON path.

    `check_depth=False` skips the 255-1,024-level check (one extra serialisation of the whole
    value) for callers whose save path reports such nesting itself: opening a thread file,
    where that check cost 10 % of the load time. Deeper than 1,024 levels is always refused."""
    try:
        value = orjson.loads(data)
        return _check(value, data, path) if check_depth else value
    except orjson.JSONDecodeError as exc:
        first = exc
    where = _position(data, first.pos) if isinstance(first.pos, int) else (1, 1)
    if "depth" in first.msg or "recursion" in first.msg.lower():
        raise _too_deep(data, path, where)
    try:
        value = json.loads(data.decode("utf-8-sig"), parse_int=parse_int)
    except UnicodeDecodeError as exc:
        line, col = _position(data, exc.start)
        raise MalformedJsonError(path, line, col, "the file is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise MalformedJsonError(path, exc.lineno, exc.colno, printable(exc.msg)) from None
    except RecursionError:
        raise _too_deep(data, path, where) from None
    problem = first_problem(value)  # what orjson refused and the stdlib let through
    if problem is not None:
        raise UnsupportedJsonError(path, *problem)
    return value


def read_json(path: Path | str, *, max_bytes: int = FILE_MAX_BYTES) -> Any:
    """Read and parse a JSON file, with a clear error for unreadable, special, oversized or
    malformed files. Settings files pass `max_bytes=SETTINGS_MAX_BYTES`."""
    return loads_located(read_file_bytes(path, max_bytes=max_bytes), path)


# -- YAML ----------------------------------------------------------------------------------
YAML_ALIAS_ALLOWANCE = 10_000_000  # values + characters that aliases may add to what a file spells out


def load_yaml(text: str) -> Any:
    """`yaml.safe_load(text)` for files a user or a stranger wrote (evaluation files, YAML
    datasets, SKILL.md frontmatter). Aliases (`*name`) are kept, but a document whose
    aliases expand to more than `YAML_ALIAS_ALLOWANCE` values and characters beyond those
    it spells out ("billion laughs": nine anchors of ten aliases each, 10^9 strings), or
    that holds an alias inside its own anchor, is refused with a `yaml.YAMLError` (a
    `ComposerError` with a problem and a mark) before anything is built from it."""
    import yaml

    return yaml.load(text, Loader=_bounded_loader())  # a SafeLoader subclass


_LOADER: Any = None


def _bounded_loader() -> Any:
    global _LOADER
    if _LOADER is None:
        import yaml
        from yaml.composer import ComposerError
        from yaml.events import AliasEvent

        class BoundedSafeLoader(yaml.SafeLoader):
            """SafeLoader whose composed document is measured with its aliases expanded."""

            alias_mark: Any = None

            def compose_node(self, parent: Any, index: Any) -> Any:
                if self.alias_mark is None and self.check_event(AliasEvent):
                    self.alias_mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                return super().compose_node(parent, index)

            def compose_document(self) -> Any:
                node = super().compose_document()
                if self.alias_mark is not None:
                    problem = _alias_problem(node)
                    if problem:
                        raise ComposerError(None, None, problem, self.alias_mark)
                return node

        _LOADER = BoundedSafeLoader
    return _LOADER


def _alias_problem(root: Any) -> str | None:
    """Why the node graph `root` (shared by aliases) may not be built, or None. Iterative."""
    import yaml

    def children(node: Any) -> list[Any]:
        if isinstance(node, yaml.MappingNode):
            return [n for pair in node.value for n in pair]
        if isinstance(node, yaml.SequenceNode):
            return list(node.value)
        return []

    def own(node: Any) -> int:
        return 1 + (len(node.value) if isinstance(node, yaml.ScalarNode) else 0)

    expanded: dict[int, int] = {}  # id(node) -> weight with aliases expanded (capped)
    spelled = 0  # each node once
    open_nodes: set[int] = set()  # the ancestors of the node being visited
    stack: list[tuple[Any, bool]] = [(root, False)]
    cap = YAML_ALIAS_ALLOWANCE * 4
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            open_nodes.discard(key)
            expanded[key] = min(cap, own(node) + sum(expanded[id(c)] for c in children(node)))
            continue
        if key in expanded:
            continue
        if key in open_nodes:
            return "an alias refers to a node that holds it (a recursive alias), which is not supported"
        open_nodes.add(key)
        spelled += own(node)
        stack.append((node, True))
        for child in children(node):
            if id(child) in open_nodes:
                return "an alias refers to a node that holds it (a recursive alias), which is not supported"
            if id(child) not in expanded:
                stack.append((child, False))
    if expanded[id(root)] > spelled + YAML_ALIAS_ALLOWANCE:
        return (f"its aliases (*name) expand to more than {YAML_ALIAS_ALLOWANCE:,} values and characters beyond "
                "what the file spells out, which is not supported; write the repeated parts out")
    return None
