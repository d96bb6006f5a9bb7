"""Dev mode: a plugin folder loaded in place, watched, and reloaded when it changes
(`llmspace plugins dev PATH`, docs/plugins.md "Dev mode").

    session = DevSession(app, Path("~/src/echo-kit"), out=print)
    session.start()          # checks the folder, registers it in run/dev-plugins.json, loads it
    session.poll()           # one look at the folder (the CLI calls it every `POLL` s)
    session.stop()           # unregisters it; nothing stays installed

`run/dev-plugins.json` lists the dev plugins with the pid of the process that serves each
one: `{"plugins": [{"name": "echo-kit", "folder": "/home/…/echo-kit", "pid": 4242}]}`.
`PluginService.refresh` reads it (`dev_candidates`), so the app and every CLI process load
the same folder through the same loader as an installed plugin, marked `dev`; a dev plugin
shadows an installed plugin of the same name. Entries whose process is gone are dropped.
`DevFollower` is what a long-running process (the app) uses to follow the file and the
folders: a changed folder reloads that plugin.

A change is seen by polling modification times (every `POLL` s; `node_modules`, hidden
entries and `__pycache__` skipped). Before a changed version replaces the running one, its
code files are loaded by a trial host; when a file fails to load (a syntax error, a broken
contract) the errors are printed with file and line and the previous version keeps running.
The plugin's output.log is streamed to `out` as it grows.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import UserFacingError
from ..jsonio import read_json, write_json_atomic
from ..paths import DataRoot
from ..processes import pid_alive
from .errors import PluginError

if TYPE_CHECKING:
    from .code.plugin_code import PluginCode
    from .discovery import Candidate
    from .model import PluginRecord
    from .service import PluginService


class App(Protocol):
    """What dev mode uses of the app (`llmspace.app.App`)."""

    @property
    def root(self) -> DataRoot: ...

    @property
    def plugins(self) -> PluginService: ...

    @property
    def plugin_code(self) -> PluginCode: ...

log = logging.getLogger("llmspace.plugins")

POLL = 0.2
DEV_FILE = "dev-plugins.json"
_SKIP = {"node_modules", "__pycache__"}


@dataclass(frozen=True)
class DevEntry:
    name: str
    folder: Path
    pid: int


def dev_file(root: DataRoot) -> Path:
    return root.root / "run" / DEV_FILE


def read_entries(root: DataRoot, alive: Callable[[int], bool] = pid_alive) -> list[DevEntry]:
    """The dev plugins whose serving process still runs (a missing or unreadable file: none)."""
    path = dev_file(root)
    if not path.is_file():
        return []
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
        if isinstance(name, str) and isinstance(folder, str) and isinstance(pid, int) and alive(pid):
            out.append(DevEntry(name, Path(folder), pid))
    return out


def _write_entries(root: DataRoot, entries: list[DevEntry]) -> None:
    path = dev_file(root)
    if not entries:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        try:
            path.parent.rmdir()  # run/ goes when it holds nothing else
        except OSError:
            pass
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, {"plugins": [{"name": e.name, "folder": str(e.folder), "pid": e.pid} for e in entries]},
                      trailing_newline=True)


def add_entry(root: DataRoot, entry: DevEntry) -> None:
    """Register `entry` (stale entries and an older one of the same name are dropped)."""
    kept = [e for e in read_entries(root) if e.name != entry.name]
    _write_entries(root, [*kept, entry])


def remove_entry(root: DataRoot, name: str, pid: int) -> None:
    kept = [e for e in read_entries(root) if not (e.name == name and e.pid == pid)]
    _write_entries(root, kept)


def dev_candidates(root: DataRoot) -> list[Candidate]:
    from .discovery import Candidate

    return [Candidate(e.name, e.folder, dev=True) for e in read_entries(root)]


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


def snapshot(folder: Path) -> dict[str, int]:
    """Every file of `folder` (relative path → mtime in ns), without node_modules, hidden
    entries and __pycache__."""
    out: dict[str, int] = {}
    for path in _walk(folder):
        try:
            out[str(path.relative_to(folder))] = path.stat().st_mtime_ns
        except OSError:
            continue
    return out


def _walk(folder: Path) -> Iterator[Path]:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(".") or entry.name in _SKIP:
            continue
        if entry.is_dir(follow_symlinks=False):
            yield from _walk(Path(entry.path))
        elif entry.is_file(follow_symlinks=False):
            yield Path(entry.path)


_FILE_LINE = re.compile(r'File "([^"]+)", line (\d+)')


def located(error: dict[str, Any], fallback: str) -> str:
    """`file:line: message` of a load error the host reported (the last frame of its
    traceback inside the plugin, else the file the extension lives in)."""
    message = str(error.get("message") or "failed to load")
    stack = str(error.get("stack") or "")
    where = fallback
    frames = _FILE_LINE.findall(stack) or _FILE_LINE.findall(message)
    if frames:
        where = f"{frames[-1][0]}:{frames[-1][1]}"
    else:
        js = re.search(r"(/[^\s():]+\.(?:ts|js|mjs)):(\d+)", stack + "\n" + message)
        if js:
            where = f"{js.group(1)}:{js.group(2)}"
    return f"{where}: {message}"


def trial(app: App, name: str, folder: Path) -> list[str]:
    """Load `folder` as plugin `name` and its code files in throwaway hosts, keeping nothing:
    the load errors, each `file:line: message` (none: the version may replace the running one)."""
    from .discovery import Candidate

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
        self._seen: dict[str, int] = {}
        self._log_offset = 0
        self.reloads = 0

    # -- lifetime ------------------------------------------------------------------------
    def start(self) -> PluginRecord:
        """Register the folder and load it; raises PluginError when it cannot be served."""
        self.name = manifest_name(self.folder)
        self._seen = snapshot(self.folder)
        add_entry(self.app.root, DevEntry(self.name, self.folder, os.getpid()))
        try:
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
        if self.name:
            remove_entry(self.app.root, self.name, os.getpid())
            self.app.plugins.refresh()

    # -- watching ------------------------------------------------------------------------
    def poll(self) -> bool:
        """Look at the folder once: reload what changed (True when it reloaded) and print
        what the plugin's output.log gained."""
        self._stream_log()
        now = snapshot(self.folder)
        if now == self._seen:
            return False
        changed = sorted(k for k in set(now) | set(self._seen) if now.get(k) != self._seen.get(k))
        self._seen = now
        return self.reload(changed)

    def reload(self, changed: list[str]) -> bool:
        t0 = self.clock()
        problems = self.trial()
        if problems:
            self.out(f"{self.name}: not reloaded ({', '.join(changed)} changed); the previous version keeps running:")
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
        self.out(f"{self.name}: reloaded in {(self.clock() - t0) * 1000:.0f} ms ({', '.join(changed)})")
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
    app): a changed list refreshes the plugins, a changed folder reloads its plugin."""

    def __init__(self, app: App, *, poll: float = POLL) -> None:
        self.app, self.poll = app, poll
        self._stop = threading.Event()
        self._folders: dict[str, tuple[DevEntry, dict[str, int]]] = {}
        self._file_state: tuple[int, int] | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="dev-plugins", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self.poll):
            try:
                self.step()
            except Exception:  # a broken folder must not end the following
                log.warning("following dev plugins failed", exc_info=True)

    def step(self) -> None:
        path = dev_file(self.app.root)
        try:
            st = path.stat()
            state: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
        except OSError:
            state = None
        ended = any(not pid_alive(entry.pid) for entry, _ in self._folders.values())
        if state != self._file_state or ended:
            self._file_state = state
            entries = read_entries(self.app.root)
            self._folders = {e.name: (e, snapshot(e.folder)) for e in entries}
            self.app.plugins.refresh()
            self.app.plugin_code.load()
            return
        for name, (entry, seen) in list(self._folders.items()):
            now = snapshot(entry.folder)
            if now == seen:
                continue
            self._folders[name] = (entry, now)
            problems = trial(self.app, name, entry.folder)
            if problems:  # the previous version keeps running; the dev process prints why
                log.warning("dev plugin %s not reloaded: %s", name, "; ".join(problems))
                continue
            self.app.plugins.reload(name)
            self.app.plugin_code.load()
