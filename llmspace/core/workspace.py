"""The workspace: thread files and folders under one root.

Paths given to a `Workspace` are relative, POSIX-style (`folder/name.json`). Every path is
confined to the root: `..`, absolute paths and symlinks leading outside are refused.
Saving forces the thread title to the file stem and goes through the atomic writer;
saving an unchanged thread leaves the file's bytes exactly as they were.

Tree operations (list, create, rename, duplicate, move, delete to trash, folders) never
overwrite an existing entry unless asked, and never hard-delete: deleted entries go to the
operating system's trash (send2trash) or, failing that, into `trash_dir`.

Callers: app.py (builds it), cli commands, presenters, importers, the run loop.
No threads, no network.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import orjson

from ..errors import InvalidName, NameConflict, PathOutsideWorkspace, UserFacingError
from ..jsoncheck import printable
from ..jsonio import (
    UnreadableFileError,
    UnsavableValueError,
    dumps_pretty,
    is_temp_name,
    read_file_bytes,
    remove_stale_temp,
    write_bytes_atomic,
)
from .model import Thread
from .threadio import pack_blobs, parse_thread, serialize_thread, thread_from_data, unpack_blobs

log = logging.getLogger("llmspace.workspace")

THREAD_SUFFIX = ".json"
SEED_MARKER = ".llmspace-seeded"
_FORBIDDEN = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f]')
_MAX_NAME_BYTES = 200  # leaves room for `-12`, `_copy_2`, `.json` and the writer's temp names
_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)), *(f"lpt{i}" for i in range(1, 10))}


def validate_stem(stem: str) -> str:
    """Check a file stem (or folder name) against the naming rules; returns it trimmed.

    Rules (reference §1.1): not empty after trimming; not `.` or `..`; none of
    `< > : " / \\ | ? *` or control characters; not a Windows reserved name; must not end in
    `.` or a space. Also: must not start with `.` (such entries are hidden from the tree),
    must be valid Unicode (it becomes the thread title) and at most 200 bytes as UTF-8.
    Raises `InvalidName` with the reason.
    """
    if not isinstance(stem, str):
        raise InvalidName("A name must be text.")
    name = stem.strip()
    if not name:
        raise InvalidName("A name cannot be empty.", hint="Type a name.")
    if name in (".", ".."):
        raise InvalidName(f"{name!r} is not a valid name.", hint="Choose another name.")
    bad = _FORBIDDEN.search(name)
    if bad:
        ch = bad.group(0)
        shown = repr(ch) if ch.isprintable() else f"control character U+{ord(ch):04X}"
        raise InvalidName(f"{name!r} contains {shown}, which is not allowed in a name.",
                          hint='Remove any of < > : " / \\ | ? * and control characters.')
    if name.split(".")[0].lower() in _RESERVED:
        raise InvalidName(f"{name!r} is a reserved name on Windows.", hint="Choose another name.")
    if name.endswith("."):
        raise InvalidName(f"{name!r} must not end with a dot.", hint="Remove the trailing dot.")
    if name.startswith("."):
        raise InvalidName(f"{printable(name)!r} starts with a dot, so it would be hidden from the workspace.",
                          hint="Remove the leading dot.")
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidName(f"{printable(name)!r} is not valid Unicode text (it holds bytes that are not UTF-8).",
                          hint="Type the name again using ordinary characters.") from None
    if size > _MAX_NAME_BYTES:
        raise InvalidName(f"A name can be at most {_MAX_NAME_BYTES} bytes long; this one has {size} "
                          f"({name[:40]!r}…).", hint="Choose a shorter name.")
    return name


def _rename(src: Path, dst: Path, action: str) -> None:
    """`os.rename`, falling back to copy-and-remove across file systems (e.g. a workspace on
    another disk than the trash); a failure is a clear error and leaves `src` where it was."""
    try:
        try:
            os.rename(src, dst)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            shutil.move(str(src), str(dst))
    except OSError as exc:
        raise UserFacingError(f"Could not {action} {src.name}: {exc.strerror or exc}.",
                              hint="Check the permissions of the folder and free disk space.") from None


def title_for(name: str) -> str:
    """The title shown for a tree entry: a file's stem, or a folder's name."""
    return name[: -len(THREAD_SUFFIX)] if name.endswith(THREAD_SUFFIX) else name


def blank_thread(title: str = "untitled") -> Thread:
    """A blank thread: a title and one empty user message, no model."""
    return thread_from_data({
        "title": title,
        "context": {"messages": [{"id": str(uuid.uuid4()), "role": "user", "content": [{"type": "text", "text": ""}]}]},
    })


@dataclass
class Entry:
    """One node of the workspace tree (folders carry their children)."""

    rel: str
    name: str
    title: str
    is_dir: bool
    children: "list[Entry] | None" = None


def _sort_key(name: str) -> tuple[str, str]:
    return (name.casefold(), name)


class Workspace:
    """Thread files under `root`. Keeps the bytes of opened files to avoid needless rewrites."""

    def __init__(self, root: Path, trash_dir: Path | None = None, *, use_os_trash: bool | None = None) -> None:
        self.root = Path(root).absolute()
        self.trash_dir = trash_dir
        # The OS trash is used unless switched off (argument, or LLM_SPACE_NO_OS_TRASH=1).
        if use_os_trash is None:
            use_os_trash = os.environ.get("LLM_SPACE_NO_OS_TRASH", "") not in ("1", "true", "yes")
        self.use_os_trash = use_os_trash
        # realpath -> (bytes last read or written, whether those bytes are our own serialisation)
        self._loaded: dict[str, tuple[bytes, bool]] = {}

    # -- paths ---------------------------------------------------------------------------
    def resolve(self, rel: str | os.PathLike[str]) -> Path:
        """The absolute path of `rel`, refusing anything that leaves the workspace."""
        text = os.fspath(rel).replace("\\", "/")
        if "\x00" in text:
            raise InvalidName(f"{text!r} contains a NUL character, which no path may contain.")
        if text.startswith("/") or (len(text) > 1 and text[1] == ":") or text.startswith("//"):
            raise PathOutsideWorkspace(f"{text!r} is an absolute path; use a path inside the workspace.")
        parts = PurePosixPath(text).parts
        if any(p == ".." for p in parts):
            raise PathOutsideWorkspace(f"{text!r} leaves the workspace; '..' is not allowed.")
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
        from .evaluation import sanitize_thread_data

        path, raw = self._read(rel)
        return self._opened(path, raw, thread_from_data(sanitize_thread_data(loads_located(raw, rel)), rel))

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
        if thread.title != path.stem:
            thread.title = path.stem
        return thread

    def save(self, rel: str, thread: Thread) -> bool:
        """Write `thread` atomically (title forced to the stem). Returns False when nothing changed."""
        path = self.resolve(rel)
        if thread.title != path.stem:
            thread.title = path.stem
        try:
            data = serialize_thread(thread)
        except UnsavableValueError as exc:
            raise exc.for_file(path, rel) from None
        key = self._key(path)
        old = self._loaded.get(key)
        if old is not None and path.exists():
            old_bytes, ours = old
            if old_bytes == data or (not ours and self._same_content(old_bytes, data)):
                return False
        write_bytes_atomic(path, data)  # a symlink (inside the workspace) is written through
        self._loaded[key] = (data, True)
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
        return self._scan(str(base), prefix + "/" if prefix else "", real_root, 0, False)

    def _scan(self, path: str, prefix: str, real_root: str, depth: int, via_link: bool) -> list[Entry]:
        """One folder's entries. Below a symlinked folder no further symlinked folders are
        followed, so links that loop back cannot make the tree explode."""
        dirs: list[Entry] = []
        files: list[Entry] = []
        try:
            it = os.scandir(path)
        except OSError:
            return []
        with it:
            for de in it:
                name = de.name
                if name.startswith("."):
                    if name.endswith(".tmp") and is_temp_name(name):
                        remove_stale_temp(de.path)  # left by a writer that was killed mid-save
                    continue
                try:
                    link = de.is_symlink()
                    if link:
                        real = os.path.realpath(de.path)
                        if real != real_root and not real.startswith(real_root + os.sep):
                            continue
                    is_dir = de.is_dir()
                except OSError:
                    continue
                if is_dir:
                    follow = depth < 64 and not (link and via_link)
                    children = self._scan(de.path, prefix + name + "/", real_root, depth + 1, via_link or link) if follow else []
                    dirs.append(Entry(prefix + name, name, name, True, children))
                elif name.endswith(THREAD_SUFFIX) and len(name) > len(THREAD_SUFFIX):
                    files.append(Entry(prefix + name, name, name[: -len(THREAD_SUFFIX)], False, None))
        dirs.sort(key=lambda e: _sort_key(e.name))
        files.sort(key=lambda e: _sort_key(e.title))
        return dirs + files

    def _rel_of(self, path: Path) -> str:
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
        return path

    @staticmethod
    def _unique(folder: Path, stem: str, suffix: str, sep: str = "-", first: int = 1) -> Path:
        """`stem+suffix`, else `stem-1`, `stem-2`, … (or `sep`/`first` as given) — the first free name."""
        candidate = folder / f"{stem}{suffix}"
        n = first
        while os.path.lexists(candidate):
            candidate = folder / f"{stem}{sep}{n}{suffix}"
            n += 1
        return candidate

    def unique_thread_rel(self, folder: str, stem: str) -> str:
        """The first free `stem.json`, `stem-1.json`, … in `folder` (nothing is created)."""
        return self._rel_of(self._unique(self._folder(folder), validate_stem(stem), THREAD_SUFFIX))

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
        target = self._unique(self._folder(folder), stem, THREAD_SUFFIX)
        if thread is None:
            thread = blank_thread(target.stem)
        rel = self._rel_of(target)
        self.save(rel, thread)
        return rel

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
        _rename(src, dst, "rename")
        self._moved(src, dst)
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
        dst = self._unique(src.parent, f"{src.stem}_copy", THREAD_SUFFIX, sep="_", first=2)
        new_rel = self._rel_of(dst)
        raw = self._read_bytes(src, rel)
        try:
            thread = parse_thread(raw, rel)
        except UserFacingError:
            write_bytes_atomic(dst, raw)  # keep an unreadable file as it is
            return new_rel
        thread.title = dst.stem
        self.save(new_rel, thread)
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
        _rename(src, dst, "move")
        self._moved(src, dst)
        return new_rel

    def delete(self, rel: str) -> str:
        """Send a file or folder to the trash; returns where it went ("os-trash" or a path).

        Never a hard delete: when the operating system's trash fails or is missing, the
        entry is moved into `trash_dir` under a unique name. The root cannot be deleted."""
        path = self._existing(rel)
        if os.path.realpath(path) == os.path.realpath(self.root) or path == self.root:
            raise UserFacingError("The workspace root cannot be deleted.")
        self._moved(path, None)
        if self.use_os_trash:
            try:
                from send2trash import send2trash

                send2trash(str(path))
                if not os.path.lexists(path):
                    return "os-trash"
            except Exception as exc:  # no OS trash here (headless, other mount, permissions)
                log.info("OS trash unavailable for %s (%s); using %s", rel, exc, self.trash_path)
        trash = self.trash_path
        trash.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        stem, suffix = (path.stem, path.suffix) if path.is_file() else (path.name, "")
        target = self._unique(trash, f"{stem}.{stamp}", suffix)
        _rename(path, target, "move to the trash")
        return str(target)

    @property
    def trash_path(self) -> Path:
        """Where deleted entries go when the operating system's trash is not available."""
        return Path(self.trash_dir) if self.trash_dir is not None else self.root / ".trash"

    def create_folder(self, parent: str = "", name: str = "untitled") -> str:
        """Make a new folder under a free name (`untitled`, `untitled-1`, …); returns its path."""
        base = self._folder(parent)
        target = self._unique(base, validate_stem(name), "")
        target.mkdir()
        return self._rel_of(target)

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
