"""What changed under a dev plugin's folder (`plugins dev` and the app's `DevFollower`,
llmspace/plugins/dev.py), as the operating system reports it.

    watch = FolderWatch(folder)     # PluginError: not a folder, or more than MAX_DEPTH folders deep
    watch.start()
    watch.take()                    # the relative paths changed since the last take, sorted ([]: none)
    watch.close()

The OS's file events (inotify, FSEvents, ReadDirectoryChangesW) come through `watchfiles`:
while nothing changes, watching costs nothing, however many files the folder holds. Where
events cannot be had (the OS's watch limit reached, a file system without them), the
folder is polled instead, with back-off: after a look that took T seconds of CPU the next
waits `BACKOFF` × T (at least `POLL`), so polling a huge folder costs at most about
1/BACKOFF of a core. Changes under `node_modules`, `__pycache__` and hidden entries are
left out. The walks here are iterative and stop at `MAX_DEPTH` levels; `start` refuses a
folder deeper than that with a clear error.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import PluginError

log = logging.getLogger("llmspace.plugins")

POLL = 0.2  # s between two looks when polling (and of the CLI's loop)
BACKOFF = 20  # a poll waits this many times the CPU time the last look took
MAX_DEPTH = 64  # folders below the plugin folder
DEBOUNCE_MS = 400  # events are grouped for at most this long …
STEP_MS = 50  # … and handed over once none came for this long
SKIP = frozenset({"node_modules", "__pycache__"})


def skipped(name: str) -> bool:
    return name.startswith(".") or name in SKIP


def check_depth(folder: Path) -> None:
    """PluginError when `folder` is not a folder or holds folders more than MAX_DEPTH deep."""
    if not folder.is_dir():
        raise PluginError(f"{folder} is not a folder.", hint="Point `plugins dev` at the folder that holds package.json.")
    for _path, depth in _dirs(folder):
        if depth > MAX_DEPTH:
            raise PluginError(
                f"{folder} holds folders more than {MAX_DEPTH} levels deep (such as {_path}); "
                "dev mode does not watch a folder that deep.",
                hint="Move or delete the deep folders (dev mode skips node_modules and hidden folders).")


def _dirs(folder: Path, limit: int = MAX_DEPTH + 1) -> Iterator[tuple[str, int]]:
    """(folder, depth) of `folder` and every folder below it that dev mode watches, without
    following symbolic links, down to depth `limit` (iterative: no recursion limit)."""
    stack = [(str(folder), 0)]
    while stack:
        path, depth = stack.pop()
        yield path, depth
        if depth >= limit:
            continue
        try:
            with os.scandir(path) as entries:
                for entry in entries:
                    if not skipped(entry.name) and entry.is_dir(follow_symlinks=False):
                        stack.append((entry.path, depth + 1))
        except OSError:
            continue


def snapshot(folder: Path) -> dict[str, int]:
    """Every file dev mode watches under `folder` (relative path → mtime in ns), down to
    MAX_DEPTH folders: what polling compares."""
    out: dict[str, int] = {}
    base = len(str(folder)) + 1
    for path, _depth in _dirs(folder, MAX_DEPTH):
        try:
            with os.scandir(path) as entries:
                for entry in entries:
                    if skipped(entry.name) or not entry.is_file(follow_symlinks=False):
                        continue
                    try:
                        out[entry.path[base:]] = entry.stat(follow_symlinks=False).st_mtime_ns
                    except OSError:
                        continue
        except OSError:
            continue
    return out


class FolderWatch:
    """The changes under one folder, collected by a background thread until `take`n."""

    def __init__(self, folder: Path, *, poll: float = POLL) -> None:
        self.folder, self.poll = folder, poll
        self.mode = ""  # "events" or "polling" once started
        self._changed: set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Check the folder (PluginError) and begin watching; changes from here on are seen."""
        check_depth(self.folder)
        notify = _notifier(self.folder)
        self.mode = "events" if notify is not None else "polling"
        target = (lambda: self._follow_events(notify)) if notify is not None else self._follow_by_polling
        self._thread = threading.Thread(target=target, name=f"dev-watch {self.folder.name}", daemon=True)
        self._thread.start()

    def take(self) -> list[str]:
        """The relative paths that changed since the last call, sorted."""
        with self._lock:
            changed, self._changed = self._changed, set()
        return sorted(changed)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    # -- the two ways of watching ------------------------------------------------------------
    def _add(self, paths: set[str]) -> None:
        if paths:
            with self._lock:
                self._changed |= paths

    def _follow_events(self, notify: Any) -> None:
        root = str(self.folder)
        try:
            while not self._stop.is_set():
                got = notify.watch(DEBOUNCE_MS, STEP_MS, 0, self._stop)
                if isinstance(got, str):  # "stop", or "signal"/"timeout": look at the stop flag again
                    continue
                self._add({rel for _change, path in got if (rel := _relative(root, path)) is not None})
        except Exception as exc:  # the watcher failed later (e.g. the watch limit): poll from here on
            if not self._stop.is_set():
                log.warning("watching %s by polling from now on: %s", self.folder, exc)
                self.mode = "polling"
                self._follow_by_polling()
        finally:
            notify.close()

    def _follow_by_polling(self) -> None:
        seen = snapshot(self.folder)
        wait = self.poll
        while not self._stop.wait(wait):
            t0 = time.thread_time()
            now = snapshot(self.folder)
            took = time.thread_time() - t0
            if now != seen:
                self._add({k for k in set(now) | set(seen) if now.get(k) != seen.get(k)})
                seen = now
            wait = max(self.poll, took * BACKOFF)


def _notifier(folder: Path) -> Any:
    """A `watchfiles` notifier watching `folder` recursively (its OS watches are in place when
    this returns), or None when the OS's events cannot be had here."""
    try:
        from watchfiles._rust_notify import RustNotify  # the documented "Rust backend" of watchfiles
    except ImportError:  # pragma: no cover - watchfiles is a dependency; a trimmed build may lack it
        log.info("watchfiles is not installed: dev mode polls %s", folder)
        return None
    try:
        return RustNotify([str(folder)], False, False, int(POLL * 1000), True, True)
    except Exception as exc:  # OSError (watch limit), WatchfilesRustInternalError: poll instead
        log.warning("watching %s by polling: %s", folder, exc)
        return None


def _relative(root: str, path: str) -> str | None:
    """`path` relative to `root` when dev mode watches it (not hidden, node_modules, …)."""
    if not path.startswith(root + os.sep):
        return None
    rel = path[len(root) + 1:]
    return None if any(skipped(part) for part in rel.split(os.sep)) else rel
