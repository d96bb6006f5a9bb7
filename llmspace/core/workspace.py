"""The workspace: thread files and folders under one root.

Paths given to a `Workspace` are relative, POSIX-style (`folder/name.json`). Every path is
confined to the root: `..`, absolute paths and symlinks leading outside are refused.
Saving forces the thread title to the file stem and goes through the atomic writer;
saving an unchanged thread leaves the file's bytes exactly as they were.

Callers: app.py (builds it), cli commands, presenters, the run loop. No threads, no network.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import orjson

from ..errors import PathOutsideWorkspace, UserFacingError
from ..jsonio import dumps_pretty, write_bytes_atomic
from .model import Thread
from .threadio import pack_blobs, parse_thread, serialize_thread, unpack_blobs


class Workspace:
    """Thread files under `root`. Keeps the bytes of opened files to avoid needless rewrites."""

    def __init__(self, root: Path, trash_dir: Path | None = None) -> None:
        self.root = Path(root).absolute()
        self.trash_dir = trash_dir
        # realpath -> (bytes last read or written, whether those bytes are our own serialisation)
        self._loaded: dict[str, tuple[bytes, bool]] = {}

    # -- paths ---------------------------------------------------------------------------
    def resolve(self, rel: str | os.PathLike[str]) -> Path:
        """The absolute path of `rel`, refusing anything that leaves the workspace."""
        text = os.fspath(rel).replace("\\", "/")
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
        path = self.resolve(rel)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise UserFacingError(f"{rel} does not exist in the workspace.", hint="Refresh the workspace tree.") from None
        except IsADirectoryError:
            raise UserFacingError(f"{rel} is a folder, not a thread.") from None
        except OSError as exc:
            raise UserFacingError(f"Could not read {rel}: {exc.strerror or exc}.") from None
        thread = parse_thread(raw, rel)
        self._loaded[self._key(path)] = (raw, False)
        stem = path.stem
        if thread.title != stem:
            thread.title = stem
        return thread

    def save(self, rel: str, thread: Thread) -> bool:
        """Write `thread` atomically (title forced to the stem). Returns False when nothing changed."""
        path = self.resolve(rel)
        if thread.title != path.stem:
            thread.title = path.stem
        data = serialize_thread(thread)
        key = self._key(path)
        old = self._loaded.get(key)
        if old is not None and path.exists():
            old_bytes, ours = old
            if old_bytes == data or (not ours and self._same_content(old_bytes, data)):
                return False
        write_bytes_atomic(path, data)
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
