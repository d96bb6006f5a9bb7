"""Whether a process id still names a running process (POSIX `kill(pid, 0)`): used by the
records other processes leave under `<data root>/run/` — the engine's (`local/engine.py`) and
the dev plugins' (`plugins/dev.py`) — to drop what a dead process left behind. A pid in a
record is only a claim (pids are reused, a record can be wrong): before signalling one, check
what the process is — `command_line`, `parent_pid`, and `holds_flock` / `flock_holders` for a
process that must hold a lock file.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def pid_alive(pid: int) -> bool:
    """True while `pid` exists (also when it belongs to another user and cannot be signalled)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def command_line(pid: int) -> list[str] | None:
    """The arguments process `pid` runs with, or None when it is gone, a zombie or cannot be
    read (Linux: /proc/PID/cmdline; elsewhere `ps`, split on spaces)."""
    if os.path.isdir("/proc/self/fd"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                raw = fh.read()
        except OSError:
            return None
        return [part.decode("utf-8", "replace") for part in raw.split(b"\0")[:-1]] or None
    try:
        done = subprocess.run(["ps", "-p", str(pid), "-o", "command="], capture_output=True, text=True,
                              timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return (done.stdout.split() or None) if done.returncode == 0 else None


def parent_pid(pid: int) -> int | None:
    """The parent of process `pid`, or None when it is gone or the system does not say."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return int(fh.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        pass
    if os.path.isdir("/proc/self/fd"):
        return None
    try:
        done = subprocess.run(["ps", "-p", str(pid), "-o", "ppid="], capture_output=True, text=True,
                              timeout=10, check=False)
        return int(done.stdout.strip()) if done.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


def holds_flock(pid: int, path: Path) -> bool | None:
    """Whether process `pid` holds a `flock` on the file at `path` through one of its open
    files (Linux: /proc/PID/fd and fdinfo); None where the system does not tell."""
    if not os.path.isdir("/proc/self/fdinfo"):
        return None
    try:
        wanted = os.stat(path)
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:  # no such file, process gone, or another account's process
        return False
    for fd in fds:
        try:
            st = os.stat(f"/proc/{pid}/fd/{fd}")
            if (st.st_dev, st.st_ino) != (wanted.st_dev, wanted.st_ino):
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as fh:
                info = fh.read()
        except OSError:
            continue
        if any(line.startswith("lock:") and " FLOCK " in line for line in info.splitlines()):
            return True
    return False


def flock_holders(path: Path) -> set[int]:
    """The processes /proc/locks names as holding a `flock` on the file at `path` (Linux;
    empty elsewhere). Check each with `holds_flock`: this is a list to look at, not proof."""
    try:
        st = os.stat(path)
        with open("/proc/locks") as fh:
            text = fh.read()
    except OSError:
        return set()
    inode = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    found = set()
    for line in text.splitlines():  # "1: FLOCK  ADVISORY  WRITE 8489 fe:00:2148767 0 EOF"
        fields = line.split()
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == inode and fields[4].isdigit():
            found.add(int(fields[4]))  # a waiter's line reads "1: -> FLOCK ...": fields[1] is "->"
    return found
