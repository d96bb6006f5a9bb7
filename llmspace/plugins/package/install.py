"""Install, update and remove plugin packages under `LLM_SPACE_HOME/plugins/`.

`install_zip(zip_path, plugins_dir)` checks the archive (llmspace/plugins/package/archive.py),
reads its `package.json` with `parse_manifest` (llmspace/plugins/package/manifest.py) and installs
the package into `plugin_folder(plugins_dir, name)`; the ZIP's file name and wrapper folder
never choose the folder. A plugin of the same name is replaced (an update). The extracted
folder is refused if it holds a hard link to a file outside it (package/hardlinks.py).

Every install works in one staging folder on the plugins file system,
`plugins/.staging-<random>/`: the package is extracted into `new/`, a journal `swap.json`
names the target, the installed folder is renamed aside into `old/`, `new/` is renamed into
place, and the staging folder is deleted. A failure restores `old/`; a crash is repaired by
`recover_interrupted(plugins_dir)` (called by every install and remove, and by discovery
before it scans): a staging folder holding `old/` whose target is missing puts it back, and
every other staging folder is deleted. So a failed install leaves the installed version as
it was and no debris. One lock file (`plugins/.install.lock`) serialises installs, removals
and recovery across threads and processes. `data/plugins/<name>/` is never touched.

`remove_plugin` sends a package folder to the trash (the system trash, else the data root's
`.trash/plugins/`); settings and data stay.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ...core.trash import Trash
from ...jsonio import read_json, write_json_atomic
from ..errors import PluginError
from . import archive
from .archive import DEFAULT_LIMITS, Limits
from .hardlinks import HINT, hard_link_problem
from .manifest import name_problem, parse_manifest, plugin_folder

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

STAGING_PREFIX = ".staging-"
LOCK_NAME = ".install.lock"
JOURNAL = "swap.json"
LOCK_WAIT_SECONDS = 30.0

Checkpoint = Callable[[str], None]
"""Called with "extracted", "aside" and "moved-in" as an install passes those points (tests)."""


@dataclass(frozen=True)
class InstallResult:
    """What an install did: the plugin ID, its version and folder, and the replaced version."""

    name: str
    version: str
    path: Path
    previous_version: str | None = None
    replaced: bool = False

    @property
    def message(self) -> str:
        if not self.replaced:
            return f"Installed plugin {self.name} {self.version}."
        before = f" {self.previous_version} →" if self.previous_version else ""
        return f"Updated plugin {self.name}{before} {self.version}."


def install_zip(zip_path: Path | str, plugins_dir: Path, *, limits: Limits = DEFAULT_LIMITS,
                checkpoint: Checkpoint | None = None) -> InstallResult:
    """Install or update the plugin in the ZIP at `zip_path`; `PluginError` (an
    `archive.ArchiveError` for a refused archive) on any problem, with nothing changed."""
    zip_path = Path(zip_path)
    shown = zip_path.name
    with _locked(plugins_dir):
        _recover(plugins_dir)
        with archive.open_archive(zip_path, limits) as zf:
            package = archive.scan(zf, shown, limits)
            where = f"{shown}: {package.manifest.filename}"
            manifest = parse_manifest(archive.read_member(zf, package.manifest, shown), where=where)
            target = plugin_folder(plugins_dir, manifest.name)
            _check_target(plugins_dir, target, manifest.name)
            staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=plugins_dir))
            try:
                write_json_atomic(staging / JOURNAL, {"target": manifest.name})
                (staging / "new").mkdir()
                archive.extract(zf, package, staging / "new", shown, limits)
                if checkpoint:
                    checkpoint("extracted")
                linked = hard_link_problem(staging / "new")
                if linked:
                    raise PluginError(f"Cannot install {shown}: {linked}.", hint=HINT)
                previous, replaced = _swap(staging, target, checkpoint)
            finally:
                _recover_one(plugins_dir, staging)
    return InstallResult(manifest.name, manifest.version, target, previous, replaced)


def _check_target(plugins_dir: Path, target: Path, name: str) -> None:
    """Refuse to replace anything but a real folder (a link or file there is left alone)."""
    for path in (target.parent, target) if target.parent != plugins_dir else (target,):
        if os.path.islink(path) or (os.path.lexists(path) and not path.is_dir()):
            raise PluginError(f"Cannot install {name}: {path} is not a folder (a file or symbolic link is in the way).",
                              hint="Move it away by hand and install again; nothing was changed.")


def _installed_version(folder: Path) -> str | None:
    try:
        data = (folder / archive.MANIFEST).read_bytes()
        return parse_manifest(data, where=str(folder / archive.MANIFEST)).version
    except (OSError, PluginError):
        return None


def _swap(staging: Path, target: Path, checkpoint: Checkpoint | None) -> tuple[str | None, bool]:
    """Put `staging/new` at `target`; the folder there before goes to `staging/old` and
    comes back if anything fails before the new one is in place."""
    old = staging / "old"
    previous: str | None = None
    replaced = os.path.lexists(target)
    if replaced:
        previous = _installed_version(target)
        _rename(target, old, f"move the installed {target.name} aside")
    try:
        if checkpoint:
            checkpoint("aside")
        target.parent.mkdir(parents=True, exist_ok=True)
        _rename(staging / "new", target, f"move the new {target.name} into place")
    except BaseException:
        if replaced and not os.path.lexists(target):
            _rename(old, target, f"restore the installed {target.name}")
        raise
    if checkpoint:
        checkpoint("moved-in")
    return previous, replaced


def _rename(src: Path, dst: Path, action: str) -> None:
    try:
        os.rename(src, dst)
    except OSError as exc:
        raise PluginError(f"Could not {action}: {exc.strerror or exc}.",
                          hint="Check the permissions of the plugins folder; the installed version was kept.") from None


def _discard(staging: Path) -> None:
    """Delete a staging folder; a leftover (e.g. a file still open on Windows) is swept next time."""
    shutil.rmtree(staging, ignore_errors=True)
    if os.path.lexists(staging):
        log.warning("could not delete %s; it is removed at the next install", staging)


def recover_interrupted(plugins_dir: Path) -> list[str]:
    """Repair what an interrupted install left in `plugins_dir`: a plugin folder moved aside
    but not replaced is put back, every staging folder is deleted. Returns one line per
    plugin restored. Skips (returns []) while another install holds the lock."""
    if not plugins_dir.is_dir() or not _has_staging(plugins_dir):
        return []  # the common case: a scan that finds nothing to repair writes nothing
    try:
        with _locked(plugins_dir, wait=0.0):
            return _recover(plugins_dir)
    except _Busy:
        return []


def _has_staging(plugins_dir: Path) -> bool:
    try:
        with os.scandir(plugins_dir) as it:
            return any(e.name.startswith(STAGING_PREFIX) for e in it)
    except OSError:
        return False


def _recover(plugins_dir: Path) -> list[str]:
    restored: list[str] = []
    try:
        names = sorted(e.name for e in os.scandir(plugins_dir) if e.name.startswith(STAGING_PREFIX))
    except OSError:
        return restored
    for entry in names:
        staging = plugins_dir / entry
        if os.path.islink(staging) or not staging.is_dir():
            continue
        line = _recover_one(plugins_dir, staging)
        if line:
            restored.append(line)
    return restored


def _recover_one(plugins_dir: Path, staging: Path) -> str | None:
    """Put back a plugin folder moved aside into `staging/old` when its place is empty, then
    delete the staging folder (kept when a moved-aside folder could not be put back)."""
    old = staging / "old"
    line = None
    if os.path.lexists(old):
        name = _journal_target(staging)
        if name is None:
            log.warning("%s holds a moved-aside plugin but no readable journal; left in place", staging)
            return None
        target = plugin_folder(plugins_dir, name)
        if not os.path.lexists(target):
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                os.rename(old, target)
            except OSError as exc:
                log.warning("could not restore %s from %s: %s", target, staging, exc)
                return None
            line = f"Restored plugin {name} after an interrupted install."
            log.warning("restored %s from %s after an interrupted install", target, staging)
    _discard(staging)
    return line


def _journal_target(staging: Path) -> str | None:
    try:
        value = read_json(staging / JOURNAL, max_bytes=64 * 1024)
    except Exception:  # unreadable journal: nothing can be restored from it
        return None
    name = value.get("target") if isinstance(value, dict) else None
    return name if isinstance(name, str) and name_problem(name) is None else None


def remove_plugin(plugins_dir: Path, name: str, *, trash_dir: Path, use_os_trash: bool | None = None) -> str:
    """Move the installed package `name` to the trash (llmspace/core/trash.py: the system
    trash, else `trash_dir/plugins/`); returns where it went ("os-trash" or a path). Its
    settings and `data/plugins/<name>/` stay. `PluginError` when it is not installed."""
    target = plugin_folder(plugins_dir, name)
    with _locked(plugins_dir):
        _recover(plugins_dir)
        if not os.path.lexists(target):
            raise PluginError(f"No plugin named {name} is installed in {plugins_dir}.",
                              hint="See the installed plugins with: llmspace plugins list.")
        where = Trash(plugins_dir, trash_dir / "plugins", use_os_trash).send(target, name)
        if target.parent != plugins_dir:
            with contextlib.suppress(OSError):
                target.parent.rmdir()  # the @scope folder, when it is empty now
    return where


class _Busy(Exception):
    pass


@contextlib.contextmanager
def _locked(plugins_dir: Path, wait: float = LOCK_WAIT_SECONDS) -> Iterator[None]:
    """Hold `plugins/.install.lock`; waits at most `wait` seconds, then raises `_Busy`
    (`PluginError` for callers that waited)."""
    plugins_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(plugins_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        if fcntl is not None:
            deadline = time.monotonic() + wait
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if wait <= 0:
                        raise _Busy() from None
                    if time.monotonic() >= deadline:
                        raise PluginError("Another plugin install or removal is still running.",
                                          hint="Wait for it to finish and try again.") from None
                    time.sleep(0.05)
        yield
    finally:
        os.close(fd)

