"""Dev mode: a plugin folder loaded in place, watched, and reloaded when it changes
(`llmspace plugins dev PATH`, docs/plugins.md "Dev mode").

    session = DevSession(app, Path("~/src/echo-kit"), out=print)
    session.start()          # checks the folder, registers it in run/dev-plugins.json, loads it
    session.poll()           # reloads what changed since the last poll (the CLI calls it every `POLL` s)
    session.stop()           # unregisters it; nothing stays installed

A session registers its folder in `run/dev-plugins.json` (llmspace/plugins/dev_entries.py:
the entries, each counting only while its serving process holds its lock), which
`PluginService.refresh` reads, so the app and every CLI process load the same folder through
the same loader as an installed plugin, marked `dev`. `DevFollower` is what a long-running
process (the app) uses to follow the file and the folders: a changed folder reloads that plugin.

Changes are seen through the OS's file events (`dev_watch.FolderWatch`: `node_modules`,
hidden entries and `__pycache__` skipped; polling with back-off where events cannot be
had); a folder more than `dev_watch.MAX_DEPTH` levels deep is refused. Before a changed
version replaces the running one, its code files are loaded by a trial host; when a file
fails to load (a syntax error, a broken contract) the errors are printed with file and line
and the previous version keeps running. The plugin's output.log is streamed to `out` as it
grows.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..errors import UserFacingError
from ..jsonio import read_json
from ..paths import DataRoot
from .dev_entries import (
    DevEntry,
    ServingLock,
    add_entry,
    dev_file,
    drop_empty_run,
    read_entries,
    remove_entry,
    serving,
)
from .dev_watch import POLL, FolderWatch
from .discovery import Candidate
from .errors import PluginError

if TYPE_CHECKING:
    from .code.plugin_code import PluginCode
    from .model import PluginRecord
    from .service import PluginService

__all__ = ["POLL", "DevFollower", "DevSession"]


class App(Protocol):
    """What dev mode uses of the app (`llmspace.app.App`)."""

    @property
    def root(self) -> DataRoot: ...

    @property
    def plugins(self) -> PluginService: ...

    @property
    def plugin_code(self) -> PluginCode: ...

log = logging.getLogger("llmspace.plugins")


def manifest_name(folder: Path) -> str:
    """The `name` of `folder/package.json` (PluginError when there is none to read)."""
    try:
        data = read_json(folder / "package.json")
    except UserFacingError as exc:
        raise PluginError(f"{folder} is not a plugin folder: {exc.message}",
                          hint="Point `plugins dev` at the folder that holds package.json.") from None
    name = data.get("name") if isinstance(data, dict) else None
    if not isinstance(name, str) or not name:
        raise PluginError(f"{folder / 'package.json'} has no name.", hint="Add a \"name\" to package.json.")
    return name


def listed(changed: list[str], most: int = 10) -> str:
    """`a, b, c` (and `… and N more` past `most`)."""
    shown = ", ".join(changed[:most])
    return shown + (f" and {len(changed) - most} more" if len(changed) > most else "")


def trial(app: App, name: str, folder: Path) -> list[str]:
    """Load `folder` as plugin `name` and its code files in throwaway hosts, keeping nothing:
    the load errors, each `file:line: message` (none: the version may replace the running one)."""
    record = app.plugins.load_candidate(Candidate(name, folder, dev=True))
    if record.status == "error":
        return [f"{folder / 'package.json'}: {d.summary}" for d in record.diagnostics]
    return app.plugin_code.trial_load(record)


class DevSession:
    """One dev plugin served by this process (`llmspace plugins dev`)."""

    def __init__(self, app: App, folder: Path, *, out: Callable[[str], None],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.app, self.folder, self.out, self.clock = app, folder.expanduser().resolve(), out, clock
        self.name = ""
        self._watch: FolderWatch | None = None
        self._lock: ServingLock | None = None
        self._log_offset = 0
        self.reloads = 0

    # -- lifetime ------------------------------------------------------------------------
    def start(self) -> PluginRecord:
        """Register the folder and load it; raises PluginError when it cannot be served
        (no package.json, no name, a folder too deep to watch)."""
        name = manifest_name(self.folder)
        self._watch = FolderWatch(self.folder)
        self._watch.start()  # before loading: a change made while it loads is seen
        try:
            entry = DevEntry(name, self.folder, os.getpid())
            self.name = name
            self._lock = ServingLock(self.app.root, entry)
            add_entry(self.app.root, entry)
            self.app.plugins.refresh()
            self.app.plugin_code.ensure_loaded(self.name)
            record = self.app.plugins.get(self.name)
            self._report(record)
            self._print_failures(record)
        except BaseException:
            self.stop()
            raise
        log = self.app.plugin_code.outputs.path(self.name)
        self._log_offset = log.stat().st_size if log.is_file() else 0
        return self.app.plugins.get(self.name)

    def stop(self) -> None:
        """Unregister the folder (nothing of it stays installed) and stop its hosts."""
        if self._watch is not None:
            self._watch.close()
            self._watch = None
        if self._lock is None:  # not serving (never started, or stopped already)
            return
        remove_entry(self.app.root, self.name, os.getpid())
        self._lock.release()
        self._lock = None
        drop_empty_run(self.app.root)
        self.app.plugins.refresh()

    # -- watching ------------------------------------------------------------------------
    def poll(self) -> bool:
        """Reload what changed since the last poll (True when it reloaded) and print what
        the plugin's output.log gained. Cheap when nothing changed: the OS reports changes."""
        self._stream_log()
        changed = self._watch.take() if self._watch is not None else []
        if not changed:
            return False
        return self.reload(changed)

    def reload(self, changed: list[str]) -> bool:
        t0 = self.clock()
        problems = self.trial()
        if problems:
            self.out(f"{self.name}: not reloaded ({listed(changed)} changed); the previous version keeps running:")
            for line in problems:
                self.out(f"  {line}")
            return False
        try:
            name = manifest_name(self.folder)
        except PluginError as exc:
            self.out(f"{self.name}: not reloaded: {exc.message}")
            return False
        if name != self.name:
            self.out(f"{self.name}: package.json now names {name!r}; restart `plugins dev` to serve it under that name.")
            return False
        record = self.app.plugins.reload(self.name)
        self.app.plugin_code.ensure_loaded(self.name)
        self.reloads += 1
        self.out(f"{self.name}: reloaded in {(self.clock() - t0) * 1000:.0f} ms ({listed(changed)})")
        self._print_failures(record)
        return True

    def trial(self) -> list[str]:
        return trial(self.app, self.name, self.folder)

    # -- output ----------------------------------------------------------------------------
    def _report(self, record: PluginRecord) -> None:
        shadowed = " (shadows the installed plugin of that name)" if (self.app.root.plugins / self.name).exists() else ""
        self.out(f"{record.key} {record.version or ''}: dev from {self.folder}{shadowed}; watching for changes (Ctrl-C stops)")

    def _print_failures(self, record: PluginRecord) -> None:
        for d in record.diagnostics:
            self.out(f"  {d.summary}")
        for ext in record.extensions:
            if ext.status == "failed":
                self.out(f"  {ext.path}: {ext.reason}")

    def _stream_log(self) -> None:
        path = self.app.plugin_code.outputs.path(self.name)
        try:
            size = path.stat().st_size
        except OSError:
            return
        if size < self._log_offset:  # rotated
            self._log_offset = 0
        if size == self._log_offset:
            return
        with path.open("rb") as f:
            f.seek(self._log_offset)
            data = f.read(size - self._log_offset)
        self._log_offset = size
        for line in data.decode("utf-8", "replace").splitlines():
            self.out(f"[{self.name}] {line}")


class DevFollower:
    """Follows `run/dev-plugins.json` and the dev folders for a long-running process (the
    app): a changed list refreshes the plugins, a changed folder reloads its plugin. A
    folder that cannot be watched (too deep) is logged and its plugin stays loaded as it
    is; a failed look is logged and tried again later (with back-off), never the end of
    the following."""

    def __init__(self, app: App, *, poll: float = POLL) -> None:
        self.app, self.poll = app, poll
        self._stop = threading.Event()
        self._folders: dict[str, tuple[DevEntry, FolderWatch | None]] = {}
        self._file_state: tuple[int, int, int] | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="dev-plugins", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is None:  # stepped by hand: nothing else uses the watches
            self._follow([])

    def _run(self) -> None:
        wait = self.poll
        while not self._stop.wait(wait):
            try:
                self.step()
                wait = self.poll
            except Exception:  # a broken folder or file must not end the following
                wait = min(max(wait * 2, 1.0), 30.0)
                log.warning("following dev plugins failed; trying again in %.0f s", wait, exc_info=True)
        self._follow([])

    def step(self) -> bool:
        """One look: True when the plugins were refreshed or one was reloaded."""
        path = dev_file(self.app.root)
        try:
            st = path.stat()
            state: tuple[int, int, int] | None = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            state = None
        ended = any(not serving(path.parent, entry, by_pid=False) for entry, _ in self._folders.values())
        if state != self._file_state or ended:
            self._follow(read_entries(self.app.root))
            self.app.plugins.refresh()
            self.app.plugin_code.load()
            self._file_state = state
            return True
        reloaded = False
        for name, (entry, watch) in list(self._folders.items()):
            changed = watch.take() if watch is not None else []
            if not changed:
                continue
            problems = trial(self.app, name, entry.folder)
            if problems:  # the previous version keeps running; the dev process prints why
                log.warning("dev plugin %s not reloaded: %s", name, "; ".join(problems))
                continue
            self.app.plugins.reload(name)
            self.app.plugin_code.load()
            reloaded = True
        return reloaded

    def _follow(self, entries: list[DevEntry]) -> None:
        """Watch the folders of `entries` (and no others)."""
        wanted = {e.name: e for e in entries}
        for name, (entry, watch) in list(self._folders.items()):
            if wanted.get(name) != entry:
                if watch is not None:
                    watch.close()
                del self._folders[name]
        for name, entry in wanted.items():
            if name in self._folders or self._stop.is_set():
                continue
            fresh = FolderWatch(entry.folder)
            try:
                fresh.start()
            except PluginError as exc:
                log.warning("dev plugin %s: %s Its changes are not followed here.", name, exc.message)
                self._folders[name] = (entry, None)
                continue
            self._folders[name] = (entry, fresh)
