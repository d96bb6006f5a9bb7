"""The process side of plugin hosts on Linux: who starts them, what belongs to them, how
much memory that takes, and how all of it ends (docs/plugin-protocol.md, "Processes").

    proc = SPAWNER.popen(argv, cwd=…, env=…)   # forked by one long-lived thread
    pids = host_tree(proc.pid, token)           # the host, its descendants, orphans it left us
    rss_mb(pids)                                # resident memory of them, in MB
    kill_tree(pids)                             # SIGKILL each, reap the ones we adopted

Every host is started with `LLM_SPACE_HOST_TOKEN` (unique per host) in its environment, so
the processes it starts carry it too. The app makes itself a child subreaper
(`PR_SET_CHILD_SUBREAPER`, `become_subreaper`): what a host's children leave behind is
reparented to the app instead of PID 1, where `host_tree` finds it by that token even after
`setsid`. `PR_SET_PDEATHSIG` fires when the *thread* that forked the child ends, so hosts are
forked by one thread that lives as long as the app (`SPAWNER`), never by a short-lived
worker. Outside Linux every function here degrades to what the OS offers (no /proc: only
the host's own pid). No imports from the rest of the app.
"""

from __future__ import annotations

import ctypes
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from typing import Any

LINUX = sys.platform.startswith("linux")
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
TOKEN_ENV = "LLM_SPACE_HOST_TOKEN"
PARENT_ENV = "LLM_SPACE_APP_PID"
REAP_WAIT = 1.0
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_subreaper: bool | None = None
_subreaper_lock = threading.Lock()


def prctl(option: int, value: int) -> bool:
    """`prctl(option, value)` through libc; False when it failed or this is not Linux."""
    if not LINUX:
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def become_subreaper() -> bool:
    """Make this process the reaper of its descendants' orphans (once; Linux only)."""
    global _subreaper
    with _subreaper_lock:
        if _subreaper is None:
            _subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1)
        return _subreaper


class _Spawner:
    """Starts processes from one daemon thread that lives as long as the app."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def popen(self, argv: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="plugin-host-spawner", daemon=True)
                self._thread.start()
        future: Future[subprocess.Popen[bytes]] = Future()
        self._jobs.put((lambda: subprocess.Popen(argv, **kwargs), future))
        return future.result()

    def _run(self) -> None:
        while True:
            job, future = self._jobs.get()
            try:
                future.set_result(job())
            except BaseException as exc:  # handed to the caller
                future.set_exception(exc)


SPAWNER = _Spawner()


def _fields(pid: int | str) -> list[str]:
    """The fields of /proc/<pid>/stat after the command name (state first); [] when gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode("ascii", "replace")
    except OSError:
        return []
    return raw[raw.rfind(")") + 2:].split()


def stat(pid: int) -> tuple[int, str]:
    """(parent pid, state letter) of `pid`; (0, "") when it is gone."""
    fields = _fields(pid)
    return (int(fields[1]), fields[0]) if len(fields) > 1 else (0, "")


def _table() -> dict[int, tuple[int, str, str]]:
    """pid → (parent pid, state, start time) of every process /proc shows."""
    out: dict[int, tuple[int, str, str]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if name.isdigit():
            fields = _fields(name)
            if len(fields) > 19:
                out[int(name)] = (int(fields[1]), fields[0], fields[19])
    return out


def _has_token(pid: int, token: str) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return f"{TOKEN_ENV}={token}".encode() in f.read().split(b"\0")
    except OSError:
        return False


def host_tree(host_pid: int | None, token: str) -> dict[int, str]:
    """pid → start time of the host, its descendants, and the orphans of its descendants this
    process adopted (children of ours carrying the host's token) with their descendants."""
    table = _table()
    if not table:
        return {host_pid: ""} if host_pid is not None else {}
    me = os.getpid()
    roots = [host_pid] if host_pid is not None and host_pid in table else []
    roots += [pid for pid, (ppid, _, _) in table.items()
              if ppid == me and pid != host_pid and _has_token(pid, token)]
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: dict[int, str] = {}
    stack = list(roots)
    while stack:
        pid = stack.pop()
        if pid in found:
            continue
        found[pid] = table[pid][2]
        stack += children.get(pid, [])
    return found


def rss_mb(pids: Iterable[int]) -> float:
    """Resident memory of `pids` together, in MB (processes that are gone count 0)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm", "rb") as f:
                total += int(f.read().split()[1]) * _PAGE
        except (OSError, ValueError, IndexError):
            continue
    return total / (1024 * 1024)


def kill_tree(pids: dict[int, str], *, skip: int | None = None) -> None:
    """SIGKILL every process of `pids` still running with the same start time, then reap
    those that are children of this process (orphans it adopted; `skip` is reaped by its
    `Popen`)."""
    current = _table()
    for pid, started in pids.items():
        if pid == skip or pid == os.getpid():
            continue
        now = current.get(pid)
        if now is None or (started and now[2] != started):
            continue  # gone, or the pid was reused
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue
        if now[0] == os.getpid():
            _reap(pid, REAP_WAIT)


def _reap(pid: int, bound: float) -> None:
    deadline = time.monotonic() + bound
    pause = threading.Event()
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except OSError:  # reaped elsewhere
            return
        if done or time.monotonic() >= deadline:
            return
        pause.wait(0.01)


def reap_adopted(pids: Iterable[int]) -> None:
    """Reap the adopted orphans among `pids` that have ended (no zombies left behind)."""
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except OSError:
            pass
