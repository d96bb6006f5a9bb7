"""The files under `run/` through which every process of one data root shares the engine.

  local-engine.json       the record of the running engine (mode 0600: it holds the API key):
                          supervisorPid, pid, port, apiKey, model, modelPath, startedAt, …;
                          written by the supervisor once llama-server answers /health
  local-engine.lock       held (exclusive flock) by the supervisor for as long as it lives:
                          "is the engine alive" is "is this lock taken", immune to pid reuse
  local-engine.start.lock taken by a process that starts, switches or stops the engine
  local-engine.busy       held shared by every process while one of its requests runs; the
                          supervisor's idle check takes it exclusively, without waiting
  local-engine.used       its modification time is the engine's last use
  local-engine-exit.json  how llama-server last ended when nobody asked it to (a crash)

Standard library and foundation only: the supervisor process imports this module.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from ..errors import UserFacingError
from ..jsonio import read_json, write_json_atomic
from ..paths import private_folder

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: the engine's sharing is POSIX-only for now
    fcntl = None  # type: ignore[assignment]

RECORD = "local-engine.json"
LIFE_LOCK = "local-engine.lock"
START_LOCK = "local-engine.start.lock"
BUSY = "local-engine.busy"
USED = "local-engine.used"
EXIT = "local-engine-exit.json"


def run_dir(root_path: Path) -> Path:
    """`run/` of the data root at `root_path` (created, private to the user: an older, wider
    folder and its files are tightened, `paths.private_folder`)."""
    return private_folder(root_path / "run")


def _open(path: Path) -> IO[bytes]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    return os.fdopen(fd, "r+b")


def try_lock(path: Path, *, shared: bool = False) -> IO[bytes] | None:
    """The open lock file with the lock taken, or None when another process holds it."""
    f = _open(path)
    if fcntl is None:  # pragma: no cover
        return f
    try:
        fcntl.flock(f.fileno(), (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except OSError:
        f.close()
        return None
    return f


def is_held(path: Path) -> bool:
    """Whether some process holds `path` locked (exclusively or shared)."""
    f = try_lock(path)
    if f is None:
        return True
    f.close()
    return False


@contextlib.contextmanager
def locked(path: Path, *, shared: bool = False, timeout: float = 600.0,
           cancelled: Any = None, what: str = "the built-in engine") -> Iterator[None]:
    """Hold the lock on `path`, waiting for it up to `timeout` seconds (`cancelled()` stops
    the wait)."""
    deadline = time.monotonic() + timeout
    delay = 0.02
    while True:
        f = try_lock(path, shared=shared)
        if f is not None:
            break
        if cancelled is not None and cancelled():
            raise UserFacingError("Stopped while waiting for the built-in engine.")
        if time.monotonic() > deadline:
            raise UserFacingError(f"Another process kept {what} busy for more than {timeout:.0f} s.",
                                  hint="Try again, or stop the engine with `llmspace local stop`.")
        time.sleep(delay)  # another process's lock has no event to wait on
        delay = min(delay * 2, 0.2)
    try:
        yield
    finally:
        f.close()


def read_record_file(run: Path, name: str) -> dict[str, Any] | None:
    """The JSON object in `run/<name>`, or None (missing, unreadable or not an object)."""
    try:
        data = read_json(run / name)
    except (UserFacingError, OSError):
        return None
    return data if isinstance(data, dict) else None


def write_record_file(run: Path, name: str, record: dict[str, Any]) -> None:
    write_json_atomic(run / name, record, mode=0o600)


def read_record(run: Path) -> dict[str, Any] | None:
    return read_record_file(run, RECORD)


def write_record(run: Path, record: dict[str, Any]) -> None:
    write_record_file(run, RECORD, record)


def remove(run: Path, name: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        (run / name).unlink()


def touch_used(run: Path) -> None:
    path = run / USED
    with contextlib.suppress(OSError):
        path.touch(mode=0o600)
        os.utime(path)


def last_used(run: Path) -> float | None:
    try:
        return (run / USED).stat().st_mtime
    except OSError:
        return None
