"""The process side of plugin hosts on Linux: who starts them, what belongs to them, how
much memory that takes, and how all of it ends (docs/plugin-protocol.md, "Processes").

    proc = SPAWNER.popen(argv, cwd=…, env=…)   # forked by one long-lived thread
    group = HostCgroup.make(token, proc.pid)    # a cgroup of its own where one can be made, else None
    pids = host_processes(proc.pid, token, group)  # the host, its descendants, orphans it left us
    rss_mb(pids)                                # resident memory of them, in MB
    pids = stop_tree(proc.pid, token, group)    # SIGSTOP all of them (none can fork any more)
    kill_tree(pids)                             # SIGKILL each, reap the ones we adopted
    group.end()                                 # kill what is in the cgroup, remove it

What a host starts is found by something it cannot erase. Where the app may create a cgroup
v2 beside its own (`/proc/self/cgroup`, a `cgroup2` mount: a systemd user session delegates
the user's cgroups; root in a container), each host gets one (`llmspace-host-<token>`) before
it reads its first request: a process stays in it whatever it does to its session, parents
or environment, and `cgroup.kill` ends them all at once. Elsewhere the host's tree: the host
makes itself its descendants' reaper (`PR_SET_CHILD_SUBREAPER`, llmspace/plugin_host/guard.py;
the seccomp filter refuses undoing it), so a process leaving its parent with `setsid` is
reparented to the host and stays in its tree; `stop_tree` stops the whole tree before it is
killed, so nothing escapes while the host ends. Every host is also started with
`LLM_SPACE_HOST_TOKEN` (unique per host) in its environment, and the app makes itself a child
subreaper too (`become_subreaper`): what a legacy plugin's processes leave behind after its
host ended is reparented to the app instead of PID 1, where `host_tree` finds it by that
token. `PR_SET_PDEATHSIG` fires when the *thread* that forked the child ends, so hosts are
forked by one thread that lives as long as the app (`SPAWNER`), never by a short-lived
worker. Outside Linux every function here degrades to what the OS offers (no /proc: only
the host's own pid). No imports from the rest of the app.
"""

from __future__ import annotations

import ctypes
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from pathlib import Path
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
CGROUP_PREFIX = "llmspace-host-"
USE_CGROUPS = True  # False: every host is tracked by its tree alone (tests of that way set it)
STOP_ROUNDS = 50  # at most this many passes of SIGSTOP over a tree that keeps forking


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


def start_time(pid: int) -> str:
    """The start time of `pid` (clock ticks after boot, as /proc says); "" when it is gone."""
    fields = _fields(pid)
    return fields[19] if len(fields) > 19 else ""


def host_processes(host_pid: int | None, token: str, group: HostCgroup | None) -> dict[int, str]:
    """pid → start time of every process of a host: its tree (`host_tree`) and its cgroup."""
    found = host_tree(host_pid, token)
    if group is not None:
        for pid in group.pids():
            if pid not in found:
                started = start_time(pid)
                if started:
                    found[pid] = started
    return found


def stop_tree(host_pid: int | None, token: str, group: HostCgroup | None) -> dict[int, str]:
    """SIGSTOP every process of a host, again and again until a pass finds none it had not
    stopped (a stopped process cannot fork, and an orphan comes back to the host, its reaper),
    so the SIGKILL that follows reaches all; returns them (pid → start time)."""
    stopped: dict[int, str] = {}
    for _ in range(STOP_ROUNDS):
        fresh = {pid: t for pid, t in host_processes(host_pid, token, group).items()
                 if pid not in stopped and pid != os.getpid()}
        if not fresh:
            break
        for pid in fresh:
            try:
                os.kill(pid, signal.SIGSTOP)
            except OSError:
                pass
        stopped.update(fresh)
    return stopped


def _cgroup_unescape(text: str) -> str:
    """A path of /proc/self/mountinfo as it is (spaces and the like come as \\040 …)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def own_cgroup() -> Path | None:
    """The cgroup v2 folder this process is in (None without a cgroup2 mount that shows it)."""
    if not LINUX:
        return None
    try:
        with open("/proc/self/cgroup", encoding="utf-8", errors="replace") as f:
            relative = next((line[3:].strip() for line in f if line.startswith("0::")), None)
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
            mounts = [line.split(" - ", 1) for line in f if " - cgroup2 " in line]
    except OSError:
        return None
    if relative is None or not mounts or relative.endswith(" (deleted)"):
        return None
    fields = mounts[0][0].split()
    root, point = _cgroup_unescape(fields[3]), _cgroup_unescape(fields[4])
    if root != "/" and (relative == root or relative.startswith(root + "/")):
        relative = relative[len(root):]
    folder = Path(point) / relative.lstrip("/")
    return folder if folder.is_dir() else None


_swept: set[Path] = set()


def _sweep_once(base: Path) -> None:
    """Remove the empty host cgroups left beside this process's own (by an app that was
    killed before it could remove them); once per process. A cgroup still holding a process
    cannot be removed, so another app's live host keeps its own."""
    with _subreaper_lock:
        if base in _swept:
            return
        _swept.add(base)
    try:
        names = [entry.name for entry in os.scandir(base) if entry.name.startswith(CGROUP_PREFIX)]
    except OSError:
        return
    for name in names:
        try:
            (base / name).rmdir()
        except OSError:
            pass


class HostCgroup:
    """The cgroup v2 of one host: made beside the app's own, the host moved in before it reads
    its first request; everything it starts is born in it and stays there."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def make(cls, token: str, host_pid: int) -> HostCgroup | None:
        """A cgroup for the host `host_pid`, or None where the app may not make one here."""
        base = own_cgroup() if USE_CGROUPS else None
        if base is None:
            return None
        _sweep_once(base)
        group = cls(base / f"{CGROUP_PREFIX}{token}")
        try:
            group.path.mkdir()
        except OSError:
            return None
        if not group._write("cgroup.procs", str(host_pid)):
            group.remove()
            return None
        return group

    def _write(self, name: str, value: str) -> bool:
        try:
            with open(self.path / name, "w", encoding="ascii") as f:
                f.write(value)
            return True
        except OSError:
            return False

    def pids(self) -> list[int]:
        """The processes in the cgroup now ([] once it is gone)."""
        try:
            with open(self.path / "cgroup.procs", encoding="ascii") as f:
                return [int(line) for line in f.read().split() if line.isdigit()]
        except OSError:
            return []

    def end(self, *, skip: int | None = None, bound: float = 2.0) -> None:
        """SIGKILL every process in the cgroup (`cgroup.kill`, Linux 5.14; else one by one),
        reap those that are children of this process (`skip` is reaped by its `Popen`), and
        remove the cgroup once it is empty (bounded)."""
        me, pause = os.getpid(), threading.Event()
        deadline = time.monotonic() + bound
        while True:
            members = self.pids()
            if not members:
                break
            if not self._write("cgroup.kill", "1"):
                for pid in members:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
            for pid in members:
                if pid != skip and stat(pid)[0] == me:
                    _reap(pid, REAP_WAIT)
            if time.monotonic() >= deadline:
                break
            pause.wait(0.01)
        self.remove()

    def remove(self) -> None:
        try:
            self.path.rmdir()
        except OSError:
            pass
