"""Temp files of the atomic writer (`jsonio.write_bytes_atomic`): their names, the lock a writer
holds while it fills one, and the sweep that removes the ones a killed writer left behind.

A temp file is `.NAME.XXXXXXXX.tmp` beside its target (`is_temp_name`). While a writer fills
it, it holds an exclusive `flock` on it (`locked_temp`); a temp file nobody holds is a
leftover of a writer killed mid-save and is removed (`remove_stale_temp`, after taking the
lock itself and checking that the name still leads to the file it locked). Folders are swept
by `sweep_stale_temps`: before a save into them at most every 30 s (`sweep_now_and_then`),
when `settings/` is used, and on every workspace scan (`core/tree.py`). On Windows, where an
open file cannot be deleted, a temp file older than ten minutes counts as abandoned.
Never raises, except `locked_temp` (OSError).
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
import threading
import time
from pathlib import Path

try:  # POSIX: temp files are locked while written; Windows cannot delete open files anyway
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

_WINDOWS_STALE_SECONDS = 600  # without locks, a temp file this old is taken as abandoned
_TEMP_SUFFIX = ".tmp"
_TEMP_NAME = re.compile(r"\A\..+\.[a-z0-9_]{8}\.tmp\Z", re.DOTALL)  # mkstemp: 8 random chars
_TEMP_NAME_BYTES = 200  # keeps `.{name}.XXXXXXXX.tmp` under every file system's 255-byte limit


def _temp_prefix(name: str) -> str:
    raw = name.encode("utf-8", "surrogateescape")
    if len(raw) > _TEMP_NAME_BYTES:
        name = raw[:_TEMP_NAME_BYTES].decode("utf-8", "surrogateescape")
    return f".{name}."


def is_temp_name(name: str) -> bool:
    """True for names the atomic writer gives its temp files (`.NAME.XXXXXXXX.tmp`)."""
    return name.startswith(".") and name.endswith(_TEMP_SUFFIX) and _TEMP_NAME.match(name) is not None


def remove_stale_temp(path: str | Path) -> bool:
    """Remove one temp file of the atomic writer unless a live writer holds it; True if removed.

    POSIX: the file is removed only after taking its lock (so no writer holds it) and
    checking that the name still leads to the locked file. Windows: an open file cannot be
    deleted, and the file must be older than ten minutes."""
    path = os.fspath(path)
    if fcntl is None:  # pragma: no cover - Windows
        try:
            if time.time() - os.lstat(path).st_mtime < _WINDOWS_STALE_SECONDS:
                return False
            os.unlink(path)
        except OSError:
            return False
        return True
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return False
    try:
        held = os.fstat(fd)
        if not stat.S_ISREG(held.st_mode):
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a live writer holds it (or this file system has no locks)
            return False
        try:
            now = os.lstat(path)
        except OSError:
            return False
        if (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino):
            return False
        os.unlink(path)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def sweep_stale_temps(folder: str | Path, name: str | None = None) -> int:
    """Remove the temp files no writer holds in `folder` (only those of the file `name`, when
    given); returns how many. Never raises."""
    prefix = _temp_prefix(name) if name is not None else "."
    removed = 0
    try:
        with os.scandir(folder) as it:
            for entry in it:
                n = entry.name
                if not n.startswith(prefix) or not is_temp_name(n):
                    continue
                if name is not None and len(n) != len(prefix) + 8 + len(_TEMP_SUFFIX):
                    continue
                removed += remove_stale_temp(entry.path)
    except OSError:
        pass
    return removed


_SAVE_SWEEP_SECONDS = 30.0  # a folder is swept before a save at most this often
_save_swept: dict[str, float] = {}
_save_swept_lock = threading.Lock()


def sweep_now_and_then(folder: str | Path) -> None:
    """Sweep `folder`'s stale temp files at most every 30 s per folder: before each save
    (a sweep lists the folder, and a bulk import of N threads into one folder would
    otherwise list it N times) and when the settings folder is used (`paths.DataRoot.settings`).
    Workspace scans sweep every time (`core/tree.py`). Never raises."""
    key = os.fspath(folder)
    now = time.monotonic()
    with _save_swept_lock:
        last = _save_swept.get(key)
        if last is not None and now - last < _SAVE_SWEEP_SECONDS:
            return
        _save_swept[key] = now
    sweep_stale_temps(folder)


def _hold(fd: int, tmp: str) -> bool:
    """Lock a fresh temp file; False when a sweeper removed it before the lock was taken."""
    if fcntl is None:  # pragma: no cover - Windows
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # waits only while a sweeper checks this very file
    except OSError:
        return True  # no locks here: sweepers cannot lock it either, so they leave it alone
    try:
        held, now = os.fstat(fd), os.lstat(tmp)
    except OSError:
        return False
    return (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino)


def locked_temp(target: Path) -> tuple[int, str]:
    """A new temp file beside `target` (`.NAME.XXXXXXXX.tmp`), open and locked by this writer:
    (fd, path)."""
    prefix = _temp_prefix(target.name)
    for _ in range(100):
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=_TEMP_SUFFIX, dir=target.parent)
        if _hold(fd, tmp):
            return fd, tmp
        os.close(fd)
    raise OSError(errno.EAGAIN, "could not hold a temporary file")
