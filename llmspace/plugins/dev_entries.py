"""Which dev plugins are served, and by which process: `run/dev-plugins.json`
(`llmspace plugins dev`, docs/plugins.md "Dev mode"; the session itself is llmspace/plugins/dev.py).

    with_lock = ServingLock(root, DevEntry(name, folder, os.getpid()))  # before the entry is written
    add_entry(root, entry) / remove_entry(root, name, pid)
    read_entries(root)       # the entries a live process serves
    dev_candidates(root)     # the same, as candidates for discovery (`PluginService.refresh`)

The file lists the dev plugins with the pid of the process that serves each one:
`{"plugins": [{"name": "echo-kit", "folder": "/home/…/echo-kit", "pid": 4242}]}`.
`PluginService.refresh` reads it, so the app and every CLI process load the same folder
through the same loader as an installed plugin, marked `dev`; a dev plugin shadows an
installed plugin of the same name. An entry counts only while its process serves it: the
serving process holds a `flock` on `run/dev-<pid>-<hash of name and folder>.lock`
(`ServingLock`), and a reader checks that the lock is held, on Linux by that very pid
(`processes.holds_flock`). Writing the file therefore serves nothing: an entry whose lock
nobody holds (its process ended, or nobody ever served it), or whose pid is 1, is dropped.
`run/` is owner-only (0700, `paths.private_folder`) and its files 0600.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import UserFacingError
from ..jsonio import read_json, write_json_atomic
from ..paths import DataRoot, private_folder
from ..processes import holds_flock, pid_alive
from .discovery import Candidate

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: an entry counts while its pid runs
    fcntl = None  # type: ignore[assignment]

DEV_FILE = "dev-plugins.json"
_LOCK_GLOB = "dev-*.lock"
_OPEN_LOCK = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class DevEntry:
    name: str
    folder: Path
    pid: int


def dev_file(root: DataRoot) -> Path:
    return root.root / "run" / DEV_FILE


def lock_file(run: Path, entry: DevEntry) -> Path:
    """The lock the process serving `entry` holds (named after its pid, name and folder, so
    an entry naming another folder or pid has a lock nobody holds)."""
    key = f"{entry.name}\0{entry.folder}".encode("utf-8", "surrogatepass")
    return run / f"dev-{entry.pid}-{hashlib.sha256(key).hexdigest()[:16]}.lock"


class ServingLock:
    """The lock a `plugins dev` process holds on `run/` while it serves `entry` (taken before
    the entry is written; the file appears already locked, so no reader sees it free)."""

    def __init__(self, root: DataRoot, entry: DevEntry) -> None:
        self.path = lock_file(root.root / "run", entry)
        for attempt in range(3):  # run/ may be removed by a process that just stopped serving
            run = root.run
            try:
                fd, tmp = tempfile.mkstemp(prefix=".dev-", suffix=".lock-new", dir=run)  # 0600
                break
            except FileNotFoundError:
                if attempt == 2:
                    raise
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            os.replace(tmp, self.path)
        except BaseException:
            os.close(fd)
            _unlink(Path(tmp))
            raise
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            _unlink(self.path)
            os.close(self._fd)
            self._fd = None


def _lock_held(path: Path) -> bool | None:
    """Whether some process holds a flock on the regular file `path` (None: no such file)."""
    try:
        fd = os.open(path, _OPEN_LOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        if fcntl is None:  # pragma: no cover
            return True
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return None
        return False
    finally:
        os.close(fd)


def serving(run: Path, entry: DevEntry, *, by_pid: bool = True) -> bool:
    """Whether `entry`'s process serves it now: its lock is held (with `by_pid`, where the
    system tells, by that very process). Pid 1 and below never serve."""
    if entry.pid <= 1:
        return False
    if fcntl is None:  # pragma: no cover
        return pid_alive(entry.pid)
    path = lock_file(run, entry)
    if not _lock_held(path):
        return False
    return not by_pid or holds_flock(entry.pid, path) is not False


def read_entries(root: DataRoot) -> list[DevEntry]:
    """The dev plugins a live `plugins dev` process of this data root serves (a missing or
    unreadable file: none). Tightens `run/` to owner-only on the way."""
    path = dev_file(root)
    if not path.is_file():
        return []
    run = private_folder(path.parent, create=False)
    try:
        data = read_json(path)
    except UserFacingError:
        return []
    items = data.get("plugins") if isinstance(data, dict) else None
    out = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        name, folder, pid = item.get("name"), item.get("folder"), item.get("pid")
        if isinstance(name, str) and isinstance(folder, str) and type(pid) is int:
            entry = DevEntry(name, Path(folder), pid)
            if serving(run, entry):
                out.append(entry)
    return out


def _write_entries(root: DataRoot, entries: list[DevEntry]) -> None:
    run = root.run if entries else root.root / "run"
    path = run / DEV_FILE
    if entries:
        write_json_atomic(path, {"plugins": [{"name": e.name, "folder": str(e.folder), "pid": e.pid} for e in entries]},
                          trailing_newline=True, mode=0o600)
    else:
        _unlink(path)
    kept = {lock_file(run, e).name for e in entries}
    for lock in run.glob(_LOCK_GLOB) if run.is_dir() else ():  # left by processes killed while serving
        if lock.name not in kept and _lock_held(lock) is False:
            _unlink(lock)


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def drop_empty_run(root: DataRoot) -> None:
    try:
        (root.root / "run").rmdir()  # run/ goes when it holds nothing else
    except OSError:
        pass


def add_entry(root: DataRoot, entry: DevEntry) -> None:
    """Register `entry` (stale entries and an older one of the same name are dropped); the
    caller holds its `ServingLock`, or the entry counts for nothing."""
    kept = [e for e in read_entries(root) if e.name != entry.name]
    _write_entries(root, [*kept, entry])


def remove_entry(root: DataRoot, name: str, pid: int) -> None:
    kept = [e for e in read_entries(root) if not (e.name == name and e.pid == pid)]
    _write_entries(root, kept)


def dev_candidates(root: DataRoot) -> list[Candidate]:
    """The folders the live entries name, as dev candidates for `PluginService.refresh`."""
    return [Candidate(e.name, e.folder, dev=True) for e in read_entries(root)]
