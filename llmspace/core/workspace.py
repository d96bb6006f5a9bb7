"""The workspace: thread files and folders under one root.

Paths given to a `Workspace` are relative, POSIX-style (`folder/name.json`). Every path is
confined to the root: `..`, absolute paths and symlinks leading outside are refused.
Saving forces the thread title to the file stem and goes through the atomic writer;
saving an unchanged thread leaves the file's bytes exactly as they were.

Tree operations (list, create, rename, duplicate, move, delete to trash, folders) never
overwrite an existing entry unless asked, and never hard-delete: deleted entries go to the
operating system's trash (send2trash) or, failing that, into `trash_dir`.

Change events: `subscribe(listener)` calls `listener(WorkspaceChange)` after a thread or
folder is created, renamed or moved (`renamed`, with the old path), removed, or saved with
new bytes, on the thread that made the change (the UI hops onto its own thread through the
pump). Listeners follow `llmspace/registry.py`'s `Listeners`: thread-safe, unsubscribed by
the function `subscribe` returns; one that raises is logged and the others still hear.

Mounts: `mount(prefix, mount)` makes paths under a first segment (`trace/…`) name threads kept
outside the root, by a `Mount` the upper layer gives (the trace workbenches,
`llmspace/traces/workbench.py`): opening, saving, running, history and forks take such a
path like any other; the title of a mounted thread is its own (not forced to the file stem);
rename, duplicate, move and delete refuse it; a fork of it goes to the workspace root.

Components, each built or used here: `names` (naming rules, free names), `tree` (listing
the tree from file names), `trash` (moving entries, the trash). This module keeps path
confinement, reading and saving threads, and the tree operations that combine them.

No threads, no network.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal, Protocol

import orjson

from ..errors import InvalidName, NameConflict, PathOutsideWorkspace, UserFacingError
from ..jsoncheck import printable
from ..jsonio import UnreadableFileError, dumps_pretty, read_file_bytes, write_bytes_atomic
from ..registry import ListenerList
from .model import Thread
from .names import THREAD_SUFFIX, unique_path, validate_stem
from .threadio import pack_blobs, parse_thread, thread_from_data, unpack_blobs, write_thread_file
from .trash import Trash, move_path
from .tree import Entry, scan_tree

__all__ = ["SEED_MARKER", "Entry", "Workspace", "WorkspaceChange", "blank_thread"]  # Entry: the tree node type, defined in core/tree.py

log = logging.getLogger("llmspace.workspace")

SEED_MARKER = ".llmspace-seeded"


@dataclass(frozen=True)
class WorkspaceChange:
    """One change of the workspace: `rel` is the path now (`old` the path before, when renamed or moved)."""

    kind: Literal["created", "renamed", "removed", "saved"]
    rel: str
    old: str = ""


class Mount(Protocol):
    """Threads kept outside the workspace root, named by paths under one first segment."""

    def resolve(self, parts: tuple[str, ...]) -> Path | None:
        """The file for the path segments after the prefix; None when they name none of its threads."""

    def pseudo_path(self, real: Path) -> str | None:
        """The workspace path (prefix included) of a real file of this mount, or None."""


class _ChangeListeners(ListenerList[Callable[[WorkspaceChange], None]]):
    """Functions told of each `WorkspaceChange`."""

    def notify(self, change: WorkspaceChange) -> None:
        for listener in self.snapshot():
            try:
                listener(change)
            except Exception:  # a broken view must not fail the file operation that told it
                log.exception("a workspace listener failed on %s", change)


def blank_thread(title: str = "untitled") -> Thread:
    """A blank thread: a title and one empty user message, no model."""
    return thread_from_data({
        "title": title,
        "context": {"messages": [{"id": str(uuid.uuid4()), "role": "user", "content": [{"type": "text", "text": ""}]}]},
    })


class Workspace:
    """Thread files under `root`. Keeps the bytes of opened files to avoid needless rewrites."""

    def __init__(self, root: Path, trash_dir: Path | None = None, *, use_os_trash: bool | None = None) -> None:
        self.root = Path(root).absolute()
        # The OS trash is used unless switched off (argument, or LLM_SPACE_NO_OS_TRASH=1).
        self.trash = Trash(self.root, trash_dir, use_os_trash)
        # realpath -> (bytes last read or written, whether those bytes are our own serialisation)
        self._loaded: dict[str, tuple[bytes, bool]] = {}
        self._listeners = _ChangeListeners()
        self._mounts: dict[str, Mount] = {}

    def mount(self, prefix: str, mount: Mount) -> None:
        """Let paths `prefix/…` name threads of `mount` (see the module docstring)."""
        self._mounts[prefix] = mount

    def is_mounted(self, rel: str) -> bool:
        """True when `rel` names a thread kept outside the root (a mounted path)."""
        return self._outside(self.resolve(rel))

    def _outside(self, path: Path) -> bool:
        real_root, real = os.path.realpath(self.root), os.path.realpath(path)
        return real != real_root and not real.startswith(real_root + os.sep)

    def thread_rel(self, path: Path) -> str | None:
        """The workspace path of a file: inside the root, or a mounted thread; None otherwise."""
        real = Path(os.path.realpath(path))
        try:
            return real.relative_to(os.path.realpath(self.root)).as_posix()
        except ValueError:
            pass
        for mount in self._mounts.values():
            found = mount.pseudo_path(real)
            if found is not None:
                return found
        return None

    def subscribe(self, listener: Callable[[WorkspaceChange], None]) -> Callable[[], None]:
        """Call `listener(change)` after every change; returns the function that unsubscribes."""
        return self._listeners.add(listener)

    def _changed(self, kind: Literal["created", "renamed", "removed", "saved"], rel: str, old: str = "") -> None:
        self._listeners.notify(WorkspaceChange(kind, rel, old))

    # -- paths ---------------------------------------------------------------------------
    def resolve(self, rel: str | os.PathLike[str]) -> Path:
        """The absolute path of `rel`, refusing anything that leaves the workspace."""
        text = os.fspath(rel).replace("\\", "/")
        if "\x00" in text:
            raise InvalidName(f"{text!r} contains a NUL character, which no path may contain.")
        if text.startswith("/") or (len(text) > 1 and text[1] == ":"):  # also "//server" paths
            raise PathOutsideWorkspace(f"{text!r} is an absolute path; use a path inside the workspace.")
        parts = PurePosixPath(text).parts
        if any(p == ".." for p in parts):
            raise PathOutsideWorkspace(f"{text!r} leaves the workspace; '..' is not allowed.")
        if parts and parts[0] in self._mounts:
            mounted = self._mounts[parts[0]].resolve(tuple(parts[1:]))
            if mounted is not None:
                return mounted
        path = self.root.joinpath(*parts) if parts else self.root
        real_root = os.path.realpath(self.root)
        real = os.path.realpath(path)
        if real != real_root and not real.startswith(real_root + os.sep):
            raise PathOutsideWorkspace(f"{text!r} leads outside the workspace (through a symbolic link).")
        return path

    def relative(self, path: Path) -> str:
        return Path(path).absolute().relative_to(self.root).as_posix()

    # -- threads -------------------------------------------------------------------------
    def open(self, rel: str) -> Thread:
        """Read and validate a thread; its title is the file stem."""
        path, raw = self._read(rel)
        return self._opened(path, raw, parse_thread(raw, rel))

    def open_repaired(self, rel: str) -> Thread:
        """Open a thread whose run-history, rubric or evaluation records do not validate,
        leaving those records out (the original app's load rules). The file is not touched
        here; saving writes the thread without them."""
        from ..jsonio import loads_located
        from .run_verdict_records import sanitize_records

        path, raw = self._read(rel)
        return self._opened(path, raw, thread_from_data(sanitize_records(loads_located(raw, rel)), rel))

    def _read(self, rel: str) -> tuple[Path, bytes]:
        path = self.resolve(rel)
        return path, self._read_bytes(path, rel)

    @staticmethod
    def _read_bytes(path: Path, rel: str) -> bytes:
        """A thread file's bytes (never blocks on a named pipe or device; size capped)."""
        try:
            return read_file_bytes(path, shown=rel)
        except UnreadableFileError as exc:
            if exc.missing:
                raise UserFacingError(f"{rel} does not exist in the workspace.", hint="Refresh the workspace tree.") from None
            if exc.reason.startswith("it is a folder"):
                raise UserFacingError(f"{rel} is a folder, not a thread.") from None
            raise

    def _opened(self, path: Path, raw: bytes, thread: Thread) -> Thread:
        self._loaded[self._key(path)] = (raw, False)
        if thread.title != path.stem and not self._outside(path):
            thread.title = path.stem
        return thread

    def save(self, rel: str, thread: Thread) -> bool:
        """Write `thread` atomically through `threadio.write_thread_file` (title forced to the
        stem). Returns False when nothing changed (the file already holds these bytes)."""
        path = self.resolve(rel)
        if thread.title != path.stem and not self._outside(path):
            thread.title = path.stem
        key = self._key(path)
        old = self._loaded.get(key)

        def unchanged(data: bytes) -> bool:
            if old is None or not path.exists():
                return False
            old_bytes, ours = old
            return old_bytes == data or (not ours and self._same_content(old_bytes, data))

        data = write_thread_file(path, thread, shown=rel, unchanged=unchanged)
        if data is None:
            return False
        self._loaded[key] = (data, True)
        self._changed("saved", self._rel_of(path))
        return True

    def forget(self, rel: str) -> None:
        """Drop the remembered bytes of a file (after closing its tab)."""
        self._loaded.pop(self._key(self.resolve(rel)), None)

    @staticmethod
    def _key(path: Path) -> str:
        return os.path.realpath(path)

    @staticmethod
    def _same_content(old: bytes, new: bytes) -> bool:
        """True when `new` is what the loaded bytes `old` would serialise to (format aside)."""
        if abs(len(old) - len(new)) > len(new) // 2 + 1024:
            return False
        try:
            canonical = dumps_pretty(pack_blobs(unpack_blobs(orjson.loads(old))))
        except (orjson.JSONDecodeError, TypeError):
            return False
        return canonical == new

    # -- tree ----------------------------------------------------------------------------
    def exists(self, rel: str) -> bool:
        """True when `rel` names an existing file or folder inside the workspace."""
        return os.path.lexists(self.resolve(rel))

    def list_tree(self, folder: str = "") -> list[Entry]:
        """Folders and `.json` files under `folder`, recursively; folders first, then by name.

        Titles come from file names; no file is read. Hidden entries (leading dot) and
        symbolic links that lead outside the workspace are left out."""
        base = self.resolve(folder)
        prefix = self._rel_of(base)
        real_root = os.path.realpath(self.root)
        return scan_tree(str(base), prefix + "/" if prefix else "", real_root)

    def _rel_of(self, path: Path) -> str:
        if self._outside(path) and (found := self.thread_rel(path)) is not None:
            return found
        rel = Path(path).relative_to(self.root).as_posix()
        return "" if rel == "." else rel

    def _folder(self, folder: str) -> Path:
        path = self.resolve(folder)
        if not path.is_dir():
            if path.exists():
                raise UserFacingError(f"{folder!r} is a file, not a folder.")
            raise UserFacingError(f"The folder {folder!r} does not exist in the workspace.", hint="Refresh the workspace tree.")
        return path

    def _existing(self, rel: str) -> Path:
        path = self.resolve(rel)
        if not os.path.lexists(path):
            raise UserFacingError(f"{rel} does not exist in the workspace.", hint="Refresh the workspace tree.")
        if self._outside(path):
            raise UserFacingError(f"{rel} is kept outside the workspace folder; it cannot be renamed, duplicated, moved or deleted here.",
                                  hint="Copy it to the workspace first.")
        return path

    def unique_thread_rel(self, folder: str, stem: str) -> str:
        """The first free `stem.json`, `stem-1.json`, … in `folder` (nothing is created)."""
        return self._rel_of(unique_path(self._folder(folder), validate_stem(stem), THREAD_SUFFIX))

    def check_new_folder(self, folder: str) -> Path:
        """The path of `folder`, refusing paths outside the workspace and folder names that
        break the naming rules where the folder does not exist yet (nothing is created)."""
        base = self.resolve(folder)
        parts = PurePosixPath(os.fspath(folder).replace("\\", "/")).parts
        hidden = next((p for p in parts if p.startswith(".")), None)
        if hidden is not None:
            raise InvalidName(f"{printable(hidden)!r} starts with a dot, so threads in it would be hidden from the workspace.",
                              hint="Choose a folder whose name does not start with a dot.")
        if os.path.lexists(base):
            return base
        current = self.root
        for part in parts:
            current = current / part
            if not os.path.lexists(current) and validate_stem(part) != part:
                raise InvalidName(f"{part!r} starts or ends with a space, which is not allowed in a folder name.",
                                  hint="Remove the spaces.")
        return base

    def create_thread(self, folder: str = "", stem: str = "untitled", thread: Thread | None = None) -> str:
        """Write a new thread (blank unless given) under a free name; returns its path.
        A missing `folder` is created (its new names must follow the naming rules)."""
        stem = validate_stem(stem)
        base = self.check_new_folder(folder)
        if not base.exists():
            try:
                base.mkdir(parents=True)
            except OSError as exc:
                raise UserFacingError(f"Could not create the folder {folder!r}: {exc.strerror or exc}.",
                                      hint="Check free disk space and permissions.") from None
        target = unique_path(self._folder(folder), stem, THREAD_SUFFIX)
        if thread is None:
            thread = blank_thread(target.stem)
        rel = self._rel_of(target)
        self.save(rel, thread)
        self._changed("created", rel)
        return rel

    def fork_run(self, rel: str, run_id: str, message_id: str) -> str:
        """Write a new thread beside `rel` forked from one of its runs, up to and including a
        message (`history.fork_thread`), named `<stem>-fork`, `<stem>-fork-1`, …; returns its path."""
        from .history import fork_thread, normalize_history

        thread = self.open(rel)
        normalize_history(thread)
        new = fork_thread(thread, run_id, message_id)
        folder, _, name = rel.replace("\\", "/").rpartition("/")
        stem = name[:-5] if name.endswith(".json") else name
        if self.is_mounted(rel):  # e.g. trace/<project>/<key>/workbench.json: the fork is `<key>-fork` at the root
            folder, stem = "", folder.rpartition("/")[2] or stem
        return self.create_thread(folder, f"{stem}-fork", new)

    def rename(self, rel: str, new_stem: str) -> str:
        """Rename a thread file (same folder) and rewrite its title; never overwrites."""
        src = self._existing(rel)
        if src.is_dir():
            return self.rename_folder(rel, new_stem)
        stem = validate_stem(new_stem)
        new_rel = self._rename_entry(rel, src, src.with_name(stem + THREAD_SUFFIX))
        if new_rel != rel:
            self._retitle(new_rel)
        return new_rel

    def _rename_entry(self, rel: str, src: Path, dst: Path) -> str:
        """Rename `src` to `dst` in the same folder, never overwriting another entry."""
        new_rel = self._rel_of(dst)
        if dst == src:
            return rel
        if os.path.lexists(dst) and not self._same_file(src, dst):
            raise NameConflict(f"{new_rel} already exists; nothing was renamed.", hint="Choose another name.")
        move_path(src, dst, "rename")
        self._moved(src, dst)
        self._changed("renamed", new_rel, rel)
        return new_rel

    def _retitle(self, rel: str) -> None:
        """Make the stored title match the file name (left alone if the file cannot be parsed)."""
        try:
            thread = self.open(rel)
        except UserFacingError as exc:
            log.warning("title of %s not rewritten: %s", rel, exc)
            return
        self.save(rel, thread)

    def duplicate(self, rel: str) -> str:
        """Copy a thread next to itself as `name_copy.json`, `name_copy_2.json`, …"""
        src = self._existing(rel)
        if src.is_dir():
            raise UserFacingError(f"{rel} is a folder; only threads can be duplicated.")
        dst = unique_path(src.parent, f"{src.stem}_copy", THREAD_SUFFIX, sep="_", first=2)
        new_rel = self._rel_of(dst)
        raw = self._read_bytes(src, rel)
        try:
            thread = parse_thread(raw, rel)
        except UserFacingError:
            write_bytes_atomic(dst, raw)  # keep an unreadable file as it is
            self._changed("created", new_rel)
            return new_rel
        thread.title = dst.stem
        self.save(new_rel, thread)
        self._changed("created", new_rel)
        return new_rel

    def move(self, rel: str, dest_folder: str, overwrite: bool = False) -> str:
        """Move a file or folder into `dest_folder`; returns its new path.

        An existing entry of the same name raises `NameConflict` unless `overwrite`, in
        which case that entry goes to the trash first. A folder cannot move into itself."""
        src = self._existing(rel)
        if src == self.root:
            raise UserFacingError("The workspace root cannot be moved.")
        dest = self._folder(dest_folder)
        real_src, real_dest = os.path.realpath(src), os.path.realpath(dest)
        if src.is_dir() and not src.is_symlink() and (real_dest == real_src or real_dest.startswith(real_src + os.sep)):
            raise UserFacingError(f"{rel} cannot be moved into itself.", hint="Pick a folder outside it.")
        dst = dest / src.name
        new_rel = self._rel_of(dst)
        if dst == src:
            return rel
        if os.path.lexists(dst):
            if not overwrite:
                raise NameConflict(f"{new_rel} already exists; nothing was moved.",
                                   hint="Rename one of them, or confirm replacing the existing one.")
            self.delete(new_rel)
        move_path(src, dst, "move")
        self._moved(src, dst)
        self._changed("renamed", new_rel, rel)
        return new_rel

    def delete(self, rel: str) -> str:
        """Send a file or folder to the trash; returns where it went ("os-trash" or a path).

        Never a hard delete: when the operating system's trash fails or is missing, the
        entry is moved into `trash_dir` under a unique name. The root cannot be deleted."""
        path = self._existing(rel)
        if os.path.realpath(path) == os.path.realpath(self.root) or path == self.root:
            raise UserFacingError("The workspace root cannot be deleted.")
        self._moved(path, None)
        where = self.trash.send(path, rel)
        self._changed("removed", rel)
        return where

    @property
    def trash_path(self) -> Path:
        """Where deleted entries go when the operating system's trash is not available."""
        return self.trash.path

    def create_folder(self, parent: str = "", name: str = "untitled") -> str:
        """Make a new folder under a free name (`untitled`, `untitled-1`, …); returns its path."""
        base = self._folder(parent)
        target = unique_path(base, validate_stem(name), "")
        target.mkdir()
        rel = self._rel_of(target)
        self._changed("created", rel)
        return rel

    def rename_folder(self, rel: str, new_name: str) -> str:
        """Rename a folder in place; never overwrites."""
        src = self._existing(rel)
        if src == self.root or os.path.realpath(src) == os.path.realpath(self.root):
            raise UserFacingError("The workspace root cannot be renamed.")
        if not src.is_dir():
            raise UserFacingError(f"{rel} is not a folder.")
        return self._rename_entry(rel, src, src.with_name(validate_stem(new_name)))

    @staticmethod
    def _same_file(a: Path, b: Path) -> bool:
        try:
            return os.path.samefile(a, b)
        except OSError:
            return False

    def _moved(self, src: Path, dst: Path | None) -> None:
        """Forget remembered bytes of files at or under `src` (they now live elsewhere)."""
        old = self._key(src)
        for key in [k for k in self._loaded if k == old or k.startswith(old + os.sep)]:
            self._loaded.pop(key, None)

    # -- first start ---------------------------------------------------------------------
    def seed_examples(self) -> list[str]:
        """On the first start (empty workspace, no marker) write the example threads.

        Returns the paths written (empty when the workspace was already used)."""
        self.root.mkdir(parents=True, exist_ok=True)
        marker = self.root / SEED_MARKER
        if marker.exists():
            return []
        created: list[str] = []
        if not any(not n.startswith(".") for n in os.listdir(self.root)):
            from .examples import seed_threads

            for stem, thread in seed_threads():
                created.append(self.create_thread("", stem, thread))
        write_bytes_atomic(marker, b"seeded\n")
        return created
