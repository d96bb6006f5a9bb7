"""The workspace tree: folders and thread files under a folder, read from file names only.

`scan_tree` lists one folder recursively (folders first, then files, each sorted by name
ignoring case) without opening any file. On the way it removes temp files that a writer
killed mid-save left behind (`temp_files.remove_stale_temp` decides which are stale).

No threads, no network.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..temp_files import is_temp_name, remove_stale_temp
from .names import THREAD_SUFFIX

_MAX_DEPTH = 64
EVAL_SUFFIX = ".eval.json"  # an evaluation file (`llmspace eval`), not a thread; `.eval.yaml` is not .json anyway


@dataclass
class Entry:
    """One node of the workspace tree (folders carry their children)."""

    rel: str
    name: str
    title: str
    is_dir: bool
    children: list[Entry] | None = None


def _sort_key(name: str) -> tuple[str, str]:
    return (name.casefold(), name)


def scan_tree(path: str, prefix: str, real_root: str, depth: int = 0, via_link: bool = False) -> list[Entry]:
    """The entries of folder `path` (its workspace path plus "/" is `prefix`), recursively.

    Hidden entries (leading dot), evaluation files (`*.eval.json`) and symbolic links that lead outside `real_root` (the real
    path of the workspace root) are left out. Below a symlinked folder no further symlinked
    folders are followed, so links that loop back cannot make the tree explode."""
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
                follow = depth < _MAX_DEPTH and not (link and via_link)
                children = scan_tree(de.path, prefix + name + "/", real_root, depth + 1, via_link or link) if follow else []
                dirs.append(Entry(prefix + name, name, name, True, children))
            elif name.endswith(THREAD_SUFFIX) and len(name) > len(THREAD_SUFFIX) and not name.lower().endswith(EVAL_SUFFIX):
                files.append(Entry(prefix + name, name, name[: -len(THREAD_SUFFIX)], False, None))
    dirs.sort(key=lambda e: _sort_key(e.name))
    files.sort(key=lambda e: _sort_key(e.title))
    return dirs + files
