"""Settings › Local models: the built-in engine's catalog with Download (or Resume, for a
download stopped earlier, even in another session) and a progress bar with size, speed and
time left and a Cancel that keeps the part downloaded; the installed models with their size,
origin and where they live, Add GGUF file… and Remove; the engine's status (running, port,
model loaded, memory) with Stop. Downloads, hashing and stopping run on the worker pool and
report through the pump. Logic in `presenters/local_page.py`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ..errors import UserFacingError, error_text
from ..local import catalog
from ..local.download import Progress, parse_spec, pull
from ..local.engine import engine_status, stop_engine
from ..local.models import LocalModels
from ..presenters import first_run as fr
from ..presenters import local_page as lp
from . import download_progress, tkvars
from .first_run import GGUF_TYPES
from .list_page import fit_headings

if TYPE_CHECKING:
    from .app_services import ModelServices
    from .services import UiServices


class LocalPage(tb.Frame):
    def __init__(self, master: Any, ui: UiServices, app: ModelServices) -> None:
        super().__init__(master, padding=6)
        self.ui, self.app = ui, app
        self.worker: Future[Any] | None = None
        self.downloading: str | None = None  # the catalog name being downloaded
        self._cancel = threading.Event()
        box = tb.Labelframe(self, text="Catalog (downloaded from the Hugging Face Hub only when you click)", padding=4)
        box.pack(fill="x")
        self.catalog = tb.Treeview(box, columns=("size", "licence", "tools", "state"), show="tree headings", height=3,
                                   selectmode="browse")
        self.catalog.heading("#0", text="Model")
        for col, label, w in (("size", "Size", 80), ("licence", "Licence", 90), ("tools", "Tool calls", 180),
                              ("state", "State", 240)):
            self.catalog.heading(col, text=label)
            self.catalog.column(col, width=w, stretch=col == "state")
        self.catalog.pack(fill="x")
        row = tb.Frame(box)
        row.pack(fill="x", pady=(4, 0))
        self.download_button = tb.Button(row, text="Download", bootstyle="primary", command=self.download)
        self.download_button.pack(side="left")
        self.cancel_button = tb.Button(row, text="Cancel download", bootstyle="secondary-outline", command=self.cancel,
                                       state="disabled")
        self.cancel_button.pack(side="left", padx=4)
        self.progress = tkvars.DoubleVar(self, 0.0)
        self.bar = tb.Progressbar(row, variable=self.progress, maximum=1.0, bootstyle="info", length=180)
        self.bar.pack(side="left", padx=4)
        self.progress_text = tb.Label(box, text="", bootstyle="secondary")
        self.progress_text.pack(anchor="w")
        self.catalog.bind("<<TreeviewSelect>>", lambda e: self._sync_download_button())
        box = tb.Labelframe(self, text="Installed models", padding=4)
        box.pack(fill="both", expand=True, pady=6)
        self.installed = tb.Treeview(box, columns=("size", "origin", "path"), show="tree headings", height=4,
                                     selectmode="browse")
        self.installed.heading("#0", text="Name")
        for col, label, w in (("size", "Size", 80), ("origin", "How", 120), ("path", "Where", 320)):
            self.installed.heading(col, text=label)
            self.installed.column(col, width=w, stretch=col == "path")
        self.installed.pack(fill="both", expand=True)
        row = tb.Frame(box)
        row.pack(fill="x", pady=(4, 0))
        self.add_button = tb.Button(row, text="Add GGUF file…", bootstyle="primary-outline", command=self.add_file)
        self.add_button.pack(side="left")
        self.remove_button = tb.Button(row, text="Remove", bootstyle="danger-link", command=self.remove)
        self.remove_button.pack(side="right")
        box = tb.Labelframe(self, text="Engine (llama.cpp)", padding=4)
        box.pack(fill="x")
        self.engine = tb.Label(box, text="")
        self.engine.pack(side="left")
        self.stop_button = tb.Button(box, text="Stop", bootstyle="danger-outline", command=self.stop)
        self.stop_button.pack(side="right")
        tb.Button(box, text="Refresh", bootstyle="link", command=self.refresh).pack(side="right")
        self.msg = tb.Label(self, text="", bootstyle="danger", wraplength=640, justify="left")
        self.msg.pack(anchor="w", pady=4)
        for tree in (self.catalog, self.installed):
            fit_headings(tree)
        self.bind("<Destroy>", lambda e: self._cancel.set() if e.widget is self else None, add=True)
        self.refresh()

    # ---- reading -----------------------------------------------------------------------------
    def _store(self) -> LocalModels:
        return LocalModels(self.app.root)

    def refresh(self) -> None:
        store = self._store()
        try:
            installed, partial = store.installed(), store.partial_downloads()
        except UserFacingError as exc:
            installed, partial = [], []
            self.say(error_text(exc))
        selected = self.catalog.selection()
        self.catalog.delete(*self.catalog.get_children(""))
        for r in lp.catalog_rows(catalog.CATALOG, installed, partial):
            self.catalog.insert("", "end", iid=r.name, text=r.name, values=(r.size, r.licence, r.tool_calls, r.state))
        keep = [s for s in selected if self.catalog.exists(s)]
        self.catalog.selection_set(keep or self.catalog.get_children("")[:1])
        self.installed.delete(*self.installed.get_children(""))
        for m in lp.installed_rows(installed):
            self.installed.insert("", "end", iid=m.name, text=m.name, values=(m.size, m.origin, m.path))
        status = engine_status(self.app.root)
        self.engine.configure(text=lp.engine_text(status))
        self.stop_button.configure(state="normal" if status is not None else "disabled")
        self._sync_download_button()

    def _row(self) -> lp.CatalogRow | None:
        sel = self.catalog.selection()
        if not sel:
            return None
        rows = lp.catalog_rows(catalog.CATALOG, self._store().installed(), self._store().partial_downloads())
        return next((r for r in rows if r.name == sel[0]), None)

    def _sync_download_button(self) -> None:
        if self.downloading:
            self.download_button.configure(state="disabled")
            return
        row = self._row()
        self.download_button.configure(text=(row.action if row is not None and row.action else "Download"),
                                       state="normal" if row is not None and row.action else "disabled")

    def say(self, text: str, style: str = "danger") -> None:
        self.msg.configure(text=text, bootstyle=style)

    def _work(self, fn: Callable[[], Any], then: Callable[[Any], Any], name: str) -> None:
        def done(future: Future[Any]) -> None:
            if not self.winfo_exists():
                return
            try:
                value = future.result()
            except fr.Cancelled:
                value = None
            except UserFacingError as exc:
                self.say(error_text(exc))
                value = None
            except Exception as exc:  # shown, never raised into Tk
                self.say(error_text(exc, self.ui.errors.log_file()))
                value = None
            else:
                then(value)
            self._finish()

        self.worker = self.ui.pump.run_in_worker(fn, done, name=name)

    def _finish(self) -> None:
        self.downloading = None
        self.cancel_button.configure(state="disabled")
        for b in (self.add_button, self.remove_button):
            b.configure(state="normal")
        self.app.models.refresh_local([fr.LOCAL_PROVIDER])
        self.refresh()

    # ---- actions -----------------------------------------------------------------------------
    def download(self) -> None:
        row = self._row()
        if row is None or not row.action or self.downloading:
            return
        if self.worker is not None and not self.worker.done():
            self.say("The last download is still stopping; click again in a moment.", "secondary")
            return
        self.say("")
        self._cancel = cancel = threading.Event()
        self.downloading = row.name
        self.download_button.configure(state="disabled")
        self.cancel_button.configure(state="normal")
        self.progress.set(0.0)
        self.progress_text.configure(text="Starting the download…")
        pump, root = self.ui.pump, self.app.root
        listener = fr.CancellableListener(lambda p: pump.post(self._show_progress, p, cancel),
                                          lambda text: pump.post(self._show_note, text, cancel), cancel.is_set)
        name = row.name
        self._work(lambda: pull(LocalModels(root), parse_spec(name), listener),
                   lambda result: self.progress_text.configure(
                       text=f"{name} is installed." if not result[1] else f"{name} was already installed."),
                   "local-download")

    def _show_progress(self, p: Progress, cancel: threading.Event) -> None:
        download_progress.show_progress(self, self.progress, self.progress_text, p, cancel)

    def _show_note(self, text: str, cancel: threading.Event) -> None:
        download_progress.show_note(self, self.progress_text, text, cancel)

    def cancel(self) -> None:
        """Stop the download; what was downloaded stays and the next Download resumes it."""
        if not self.downloading:
            return
        self._cancel.set()
        self.downloading = None
        self.cancel_button.configure(state="disabled")
        self.progress_text.configure(text="Download cancelled; what was downloaded is kept. Resume continues it.")
        self._sync_download_button()

    def add_file(self) -> None:
        path = self.ui.dialogs.open_file("Add a GGUF model file", GGUF_TYPES)
        if not path:
            return
        self.say("Checking the file (SHA-256)…", "secondary")
        root = self.app.root
        self.add_button.configure(state="disabled")
        self._work(lambda: LocalModels(root).add(path),
                   lambda model: self.say(f"Added {model.name} ({model.path}).", "secondary"), "local-add")

    def remove(self) -> None:
        sel = self.installed.selection()
        if not sel:
            self.say("Select an installed model first.")
            return
        name = sel[0]
        model = self._store().find(name)
        if model is None:
            return
        what = ("Its file is deleted." if model.origin in ("downloaded", "copied")
                else f"Its file stays where it is ({model.path}).")
        if not self.ui.dialogs.confirm(f"Remove the model {name}? {what}", "Remove model"):
            return
        try:
            self._store().remove(name)
        except UserFacingError as exc:
            self.say(error_text(exc))
            return
        self.say(f"Removed {name}.", "secondary")
        self._finish()

    def stop(self) -> None:
        root = self.app.root
        self.stop_button.configure(state="disabled")
        self.engine.configure(text="Stopping…")
        self._work(lambda: stop_engine(root), lambda _stopped: None, "local-stop")
