"""File › Import from Storage… and File › Save to Storage…: plugin thread storages in the
desktop app, and opening `llm-space://` links.

A small dialog picks the storage (readable ones to import, writable ones to save) and the
resource ID (importing from a storage that can list: chosen from its list, storage_import.py); the storage call runs off the UI thread with a progress line in the status
bar; an imported thread (saved under `workspace/imported/`) opens in a tab, a save ends
in a notification with the locator. Backed by llmspace/plugins/code/storages.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ..plugins.code.calls import PluginStorage
from ..plugins.code.storages import import_thread, open_deep_link
from . import tkvars
from .storage_import import ImportDialog

if TYPE_CHECKING:
    from .app_services import StorageServices
    from .services import UiServices
    from .tab_pages import TabPages
    from .tree_view import TreeView


class StorageDialog(tb.Toplevel):
    """Choose a storage and a resource ID; `on_ok(storage, resource_id)`."""

    def __init__(self, master: Any, title: str, storages: list[PluginStorage], id_label: str,
                 on_ok: Callable[[PluginStorage, str], Any], *, id_required: bool = True) -> None:
        super().__init__(title=title, master=master, size=(560, 190))
        self.transient(master)
        self.storages, self.on_ok, self.id_required = storages, on_ok, id_required
        body = tb.Frame(self, padding=10)
        body.pack(fill="both", expand=True)
        tb.Label(body, text="Storage").grid(row=0, column=0, sticky="w")
        names = [f"{s.display_name} ({s.ref.plugin})" for s in storages]
        self.choice = tkvars.StringVar(self, names[0])
        self.box = tb.Combobox(body, values=names, textvariable=self.choice, state="readonly", width=44)
        self.box.grid(row=0, column=1, sticky="we", padx=6, pady=4)
        tb.Label(body, text=id_label).grid(row=1, column=0, sticky="w")
        self.ident = tkvars.StringVar(self, "")
        entry = tb.Entry(body, textvariable=self.ident, width=46)
        entry.grid(row=1, column=1, sticky="we", padx=6, pady=4)
        entry.focus_set()
        self.msg = tb.Label(body, text="", bootstyle="danger")
        self.msg.grid(row=2, column=0, columnspan=2, sticky="w")
        bar = tb.Frame(self, padding=8)
        bar.pack(fill="x", side="bottom")
        tb.Button(bar, text="Cancel", bootstyle="secondary", command=self.destroy).pack(side="right")
        tb.Button(bar, text="OK", bootstyle="primary", command=self.ok).pack(side="right", padx=6)
        self.bind("<Return>", lambda e: self.ok())
        self.bind("<Escape>", lambda e: self.destroy())

    def ok(self) -> None:
        ident = self.ident.get().strip()
        if self.id_required and not ident:
            self.msg.configure(text="Give the resource ID.")
            return
        storage = self.storages[self.box.current() if self.box.current() >= 0 else 0]
        self.destroy()
        self.on_ok(storage, ident)


def locator_text(locator: dict[str, Any]) -> str:
    """Where a storage saved a thread, in words: "Saved as thr_42 (version 3)."."""
    ident = locator.get("id")
    rest = [f"{k} {v if isinstance(v, str | int | float) else json.dumps(v, ensure_ascii=False)}"
            for k, v in locator.items() if k != "id" and v not in (None, "")]
    head = f"Saved as {ident}" if ident not in (None, "") else "Saved"
    return head + (f" ({', '.join(rest)})" if rest else "") + "."


class StorageActions:
    """The storage commands of the File menu and `llm-space://` links; imported threads are
    shown in the workspace tree and opened in a tab."""

    def __init__(self, ui: UiServices, app: StorageServices, tabs: TabPages, tree: TreeView) -> None:
        self.ui, self.app, self.tabs, self.tree = ui, app, tabs, tree

    def _storages(self, capability: str) -> list[PluginStorage]:
        code = self.app.plugin_code
        return [s for s in code.storages() if (s.can_read if capability == "read" else s.can_write)]

    def import_from_storage(self) -> Any:
        storages = self._storages("read")
        if not storages:
            self.ui.errors.show("No plugin can import threads. Install or enable a plugin with a readable thread storage "
                                "(Settings › Plugins).")
            return None
        workspace = self.app.workspace
        return ImportDialog(self.ui.root, storages,
                            lambda s, ident: self.run_import(lambda: import_thread(s, ident, workspace),
                                                             f"Importing from {s.display_name}…"),
                            lambda work, done: self.ui.pump.run_in_worker(work, done, name="storage-list"))

    def open_link(self, url: str) -> None:
        """Import the thread an `llm-space://` link names and open it in a tab."""
        app = self.app
        self.run_import(lambda: open_deep_link(app.plugin_code, url, app.workspace), f"Opening {url}…")

    def run_import(self, work: Callable[[], str], status: str) -> None:
        ui = self.ui
        ui.status.set(status)

        def done(future: Future[str]) -> None:
            try:
                rel = future.result()
            except Exception as exc:
                ui.errors.show(str(exc))
                return
            self.tree.refresh()
            self.tabs.open_thread(rel)
            ui.status.set(f"Imported {rel}.")

        ui.pump.run_in_worker(work, done, name="storage-import")

    def save_to_storage(self) -> Any:
        ui = self.ui
        editor = self.tabs.active_editor()
        if editor is None:
            ui.errors.show("Open the thread to save first.")
            return None
        storages = self._storages("write")
        if not storages:
            ui.errors.show("No plugin can save threads. Install or enable a plugin with a writable thread storage "
                           "(Settings › Plugins).")
            return None
        editor.flush()
        thread = editor.p.thread.model_copy(deep=True)

        def save(storage: PluginStorage, ident: str) -> None:
            ui.status.set(f"Saving to {storage.display_name}…")

            def done(future: Future[dict[str, Any]]) -> None:
                try:
                    locator = future.result()
                except Exception as exc:
                    ui.errors.show(str(exc))
                    return
                ui.status.set(f"Saved to {storage.display_name}.")
                ui.toasts.show(locator_text(locator), "success",
                               title=f"Saved to {storage.display_name}")

            ui.pump.run_in_worker(lambda: storage.write(thread, ident or None), done, name="storage-save")

        return StorageDialog(ui.root, "Save to Storage", storages, "Resource ID (optional)", save, id_required=False)
