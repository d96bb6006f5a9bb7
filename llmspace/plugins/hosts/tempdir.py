"""The private temp folder of a confined plugin's hosts (`cache/plugin-tmp/<name>/`, made by
llmspace/plugins/hosts/sandbox.py): its quota, and its end with the hosts that use it.

    temp = TempFolder(path, limit_mb=1024)
    temp.use()               # before the host starts: the folder is in use
    temp.limit(host_pid)     # no file the host writes may pass the quota (RLIMIT_FSIZE)
    why = temp.over()        # "" or why the folder holds too much (HostConnection checks every second)
    temp.ended()             # once per start: emptied when no host of the plugin uses it any more

The quota bounds what the folder takes on disk (blocks, so a sparse file counts what it really
uses; hard links once) and how many entries it holds (`MAX_ENTRIES`, which also bounds the
check itself). One file cannot pass it at all: the host and everything it starts run under
`RLIMIT_FSIZE` of the quota, soft and hard (a write past it fails with EFBIG, or SIGXFSZ ends a
runtime that does not ignore the signal; this caps every file the host writes, wherever). Many
files together pass it by at most what the plugin writes until the next check; then the host
is stopped and the folder emptied. Linux (and other systems with `prlimit`); elsewhere only the
check. No imports from the rest of the app.
"""

from __future__ import annotations

import os
import shutil
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

MAX_ENTRIES = 100_000
_users: dict[str, int] = {}  # folder → host processes using it now (a plugin's Python and JS hosts share it)
_lock = threading.Lock()


def usage(folder: Path, max_entries: int = MAX_ENTRIES) -> tuple[int, int]:
    """(bytes on disk, entries) under `folder`, links not followed; the count stops just past
    `max_entries` (the bytes are then those seen so far)."""
    total = count = 0
    seen: set[tuple[int, int]] = set()
    stack = [str(folder)]
    while stack:
        try:
            entries = os.scandir(stack.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                count += 1
                if count > max_entries:
                    return total, count
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if (info.st_dev, info.st_ino) in seen:
                    continue
                seen.add((info.st_dev, info.st_ino))
                total += getattr(info, "st_blocks", 0) * 512 or info.st_size
                if stat.S_ISDIR(info.st_mode):
                    stack.append(entry.path)
    return total, count


def _writable_again(func: Callable[..., Any], path: str, _exc: Any) -> None:
    """`shutil.rmtree`'s error handler: a folder the plugin made unwritable is made writable
    (never following a link) and the removal tried once more."""
    try:
        os.chmod(os.path.dirname(path), 0o700, follow_symlinks=False)
        if os.path.isdir(path) and not os.path.islink(path):
            os.chmod(path, 0o700)
        func(path)
    except OSError:
        pass


def empty(folder: Path) -> None:
    """Remove everything inside `folder` (links themselves, never what they point to); the
    folder stays."""
    try:
        if folder.is_symlink() or not folder.is_dir():
            return
        os.chmod(folder, 0o700)
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, onerror=_writable_again)
            else:
                os.unlink(entry.path)
        except OSError:
            pass


class TempFolder:
    """One host process's use of its plugin's temp folder."""

    def __init__(self, path: Path, limit_mb: int) -> None:
        self.path, self.limit_mb = path, limit_mb
        self._using = False

    @property
    def limit_bytes(self) -> int:
        return self.limit_mb * 1024 * 1024

    def use(self) -> None:
        """A host process is about to start with the folder (it is not emptied meanwhile)."""
        with _lock:
            if not self._using:
                self._using = True
                _users[str(self.path)] = _users.get(str(self.path), 0) + 1

    def limit(self, host_pid: int) -> None:
        """No file the host `host_pid` (and what it starts) writes may pass the quota."""
        try:
            import resource

            resource.prlimit(host_pid, resource.RLIMIT_FSIZE, (self.limit_bytes, self.limit_bytes))
        except (ImportError, AttributeError, OSError, ValueError):
            pass  # not Linux, or the host already ended

    def over(self) -> str:
        """Why the folder holds more than its quota allows ("" when it does not)."""
        used, entries = usage(self.path)
        if entries > MAX_ENTRIES:
            return f"its temp folder ({self.path}) held more than {MAX_ENTRIES:,} files and folders"
        if used > self.limit_bytes:
            return (f"its temp folder ({self.path}) held {used / (1024 * 1024):.0f} MB, more than its "
                    f"{self.limit_mb} MB")
        return ""

    def ended(self) -> None:
        """The host process ended (its processes are gone): the folder is emptied once no other
        host process of the plugin uses it. Only the first call after `use` counts."""
        with _lock:
            if not self._using:
                return
            self._using = False
            left = _users.get(str(self.path), 1) - 1
            if left > 0:
                _users[str(self.path)] = left
                return
            _users.pop(str(self.path), None)
            empty(self.path)  # under the lock: a host of the plugin starting now waits for it
