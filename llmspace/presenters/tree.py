"""Workspace tree: entries, expanded folders, and every tree intent (new file, new folder,
rename, duplicate, move, delete to trash, import, refresh) — no Tk.

All file work is delegated to `core.workspace.Workspace`; this class adds the screen logic:
which folder a new entry goes into, what to confirm, which tabs an operation affects, and
a cheap change signature (folder mtimes) so the view can notice edits made by other
programs by polling every ~2 s without reading any file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..core.model import Thread
from ..core.workspace import Entry, Workspace
from ..errors import NameConflict, UserFacingError


class TreePresenter:
    """State and intents of the workspace tree."""

    def __init__(self, workspace: Workspace, expanded: Iterable[str] = ()) -> None:
        self.ws = workspace
        self.entries: list[Entry] = []
        self.expanded: set[str] = set(expanded)
        self._sig: tuple[Any, ...] | None = None
        self.last_import_skipped: list[tuple[str, str]] = []
        # imported threads whose templates or file variables would read local files when run
        self.last_import_warnings: list[str] = []

    # -- listing -------------------------------------------------------------------------
    def refresh(self) -> list[Entry]:
        entries = self.ws.list_tree("")
        # a root folder named `shared` (deep-link imports) is pinned first, as in the original
        self.entries = sorted(entries, key=lambda e: 0 if (e.is_dir and e.rel == "shared") else 1)
        self._sig = self.signature()
        known = set(self.all_folders())
        self.expanded &= known
        return self.entries

    def all_folders(self) -> list[str]:
        out: list[str] = []

        def walk(items: list[Entry]) -> None:
            for e in items:
                if e.is_dir:
                    out.append(e.rel)
                    walk(e.children or [])

        walk(self.entries)
        return out

    def all_threads(self) -> list[str]:
        out: list[str] = []

        def walk(items: list[Entry]) -> None:
            for e in items:
                if e.is_dir:
                    walk(e.children or [])
                else:
                    out.append(e.rel)

        walk(self.entries)
        return out

    def signature(self) -> tuple[Any, ...]:
        """mtimes of every folder (adding, removing or renaming a file changes its folder's)."""
        root = str(self.ws.root)
        sig: list[Any] = []
        stack = [root]
        while stack:
            path = stack.pop()
            try:
                sig.append((path, os.stat(path).st_mtime_ns))
                with os.scandir(path) as it:
                    for de in it:
                        if not de.name.startswith(".") and de.is_dir(follow_symlinks=False):
                            stack.append(de.path)
            except OSError:
                continue
        sig.sort()
        return tuple(sig)

    def changed_on_disk(self) -> bool:
        """True when folders changed since the last refresh (the caller then refreshes)."""
        return self.signature() != self._sig

    def set_expanded(self, rel: str, expanded: bool) -> None:
        if expanded:
            self.expanded.add(rel)
        else:
            self.expanded.discard(rel)

    # -- helpers -------------------------------------------------------------------------
    def is_dir(self, rel: str) -> bool:
        return bool(rel) and self.ws.resolve(rel).is_dir()

    def folder_of(self, rel: str | None) -> str:
        """The folder a new entry goes into when `rel` is selected."""
        if not rel:
            return ""
        if self.is_dir(rel):
            return rel
        return rel.rpartition("/")[0]

    # -- intents -------------------------------------------------------------------------
    def new_file(self, selected: str | None = None, stem: str = "untitled", thread: Thread | None = None) -> str:
        folder = self.folder_of(selected)
        rel = self.ws.create_thread(folder, stem, thread)
        if folder:
            self.expanded.add(folder)
        self.refresh()
        return rel

    def new_folder(self, selected: str | None = None) -> str:
        parent = self.folder_of(selected)
        rel = self.ws.create_folder(parent, "untitled")
        if parent:
            self.expanded.add(parent)
        self.refresh()
        return rel

    def rename(self, rel: str, new_name: str) -> str:
        """Rename a thread (new stem) or folder; returns the new path. Refuses to overwrite."""
        name = new_name.strip()
        if not self.is_dir(rel) and name.endswith(".json"):
            name = name[:-5]
        new_rel = self.ws.rename_folder(rel, name) if self.is_dir(rel) else self.ws.rename(rel, name)
        if rel in self.expanded:
            self.expanded.discard(rel)
            self.expanded.add(new_rel)
        self.refresh()
        return new_rel

    def duplicate(self, rel: str) -> str:
        new_rel = self.ws.duplicate(rel)
        self.refresh()
        return new_rel

    def move(self, rel: str, dest_folder: str, overwrite: bool = False) -> str:
        """Move into `dest_folder`. Raises `NameConflict` when a same-named entry exists and
        `overwrite` is False: the view asks, then calls again with `overwrite=True`."""
        if self.folder_of(rel) == dest_folder and not self.is_dir(rel):
            return rel
        new_rel = self.ws.move(rel, dest_folder, overwrite=overwrite)
        if dest_folder:
            self.expanded.add(dest_folder)
        self.refresh()
        return new_rel

    def move_conflicts(self, rel: str, dest_folder: str) -> bool:
        name = rel.rpartition("/")[2]
        target = f"{dest_folder}/{name}" if dest_folder else name
        return target != rel and self.ws.exists(target)

    def delete(self, rel: str) -> str:
        where = self.ws.delete(rel)
        self.expanded = {e for e in self.expanded if e != rel and not e.startswith(rel + "/")}
        self.refresh()
        return where

    def delete_prompt(self, rel: str) -> str:
        kind = "folder" if self.is_dir(rel) else "thread"
        return f"Move the {kind} “{rel}” to the trash?"

    def reveal_path(self, rel: str | None) -> Path:
        """The folder to show in the file manager for `rel` (the workspace for None)."""
        if not rel:
            return Path(self.ws.root)
        path = self.ws.resolve(rel)
        return path if path.is_dir() else path.parent

    def import_files(self, paths: list[str], selected: str | None = None) -> list[str]:
        """Import thread files (any supported format) into the selected folder.

        Returns the created paths; `last_import_skipped` lists `(file, reason)` for the rest,
        `last_import_warnings` the new threads that would read local files when run."""
        from ..core.importers import import_files  # imported on first use: keeps the window's start fast

        outcomes = import_files([Path(p) for p in paths], self.ws, into=self.folder_of(selected))
        self.refresh()
        created: list[str] = []
        self.last_import_skipped = []
        self.last_import_warnings = []
        for o in outcomes:
            created.extend(str(c) for c in o.created)
            self.last_import_warnings.extend(o.warnings)
            if not o.created:
                self.last_import_skipped.append((Path(o.source).name, o.skipped or "nothing to import"))
        return created

    def import_text(self, text: str, selected: str | None = None) -> list[str]:
        """Import clipboard text as the virtual file `clipboard.json`."""
        if not text.strip():
            raise UserFacingError("The clipboard is empty.", hint="Copy a thread's JSON first.")
        from ..core.importers import parse_import_detailed  # imported on first use: keeps the window's start fast
        from ..core.templating.file_reads import local_file_reads

        result = parse_import_detailed(text.encode("utf-8"), "clipboard.json", None)
        folder = self.folder_of(selected)
        created = []
        self.last_import_warnings = []
        for thread in result.threads:
            rel = self.ws.create_thread(folder, "clipboard", thread)
            created.append(rel)
            reads = local_file_reads(thread)
            if reads:
                self.last_import_warnings.append(reads.describe(rel))
        self.refresh()
        if not created:
            raise UserFacingError("The clipboard does not hold a thread that can be imported"
                                  + (f" ({result.skip})." if result.skip else "."),
                                  hint="Copy the JSON of a thread (LLM Space, OpenAI or Anthropic format).")
        return created


__all__ = ["NameConflict", "TreePresenter"]
