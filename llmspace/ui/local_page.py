"""Settings › Local models: the built-in engine's catalog with Download (or Resume, for a
download stopped earlier, even in another session) and a progress bar with size, speed and
time left and a Cancel that keeps the part downloaded; the installed models with their size,
origin and where they live, Add GGUF file… and Remove (it asks first, saying when the model is
the default one; the engine that has it loaded is stopped); the engine's status (running, port,
model loaded, memory) with Stop. A failed download says why (pointing at Add GGUF file… where a
file you have is a way out) and leaves no progress line behind. Downloads, hashing, removing and
stopping run on the worker pool and report through the pump. What to list and do is `presenters/local_models.py`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ..errors import UserFacingError, error_text
from ..presenters import first_run as fr
from ..presenters import local_page as lp
from ..presenters.local_models import Cancelled, Download, DownloadProgress, LocalModelsPresenter
from . import download_progress, tkvars
from .first_run import GGUF_TYPES
from .list_page import fit_headings, widen_to_content

if TYPE_CHECKING:
    from .app_services import ModelServices
    from .services import UiServices


class LocalPage(tb.Frame):
    def __init__(self, master: Any, ui: UiServices, app: ModelServices) -> None:
        super().__init__(master, padding=6)
        self.ui, self.app = ui, app
        self.models = LocalModelsPresenter(app.root)
        self.worker: Future[Any] | None = None
        self.downloading: str | None = None  # the catalog name being downloaded
        self.job: Download | None = None  # the last download
        box = tb.Labelframe(self, text="Catalog (downloaded from the Hugging Face Hub only when you click)", padding=4)
        box.pack(fill="x")
        self.catalog = tb.Treeview(box, columns=("size", "licence", "tools", "state"), show="tree headings", height=3,
                                   selectmode="browse")
        self.catalog.heading("#0", text="Model")
        for col, label, w in (("size", "Size", 80), ("licence", "Licence", 90), ("tools", "Tool calls", 180),
                              ("state", "State", 240)):
            self.catalog.heading(col, text=label)
            self.catalog.column(col, width=w, stretch=col == "state")
        self.catalog.column("#0", width=200, stretch=False)
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
        self.bind("<Destroy>", lambda e: self.job.cancel() if e.widget is self and self.job else None, add=True)
        self.refresh()

    # ---- reading -----------------------------------------------------------------------------
    def refresh(self) -> None:
        listing = self.models.listing()
        if listing.problem:
            self.say(listing.problem)
        selected = self.catalog.selection()
        self.catalog.delete(*self.catalog.get_children(""))
        for r in listing.catalog:
            self.catalog.insert("", "end", iid=r.name, text=r.name, values=(r.size, r.licence, r.tool_calls, r.state))
        widen_to_content(self.catalog, ("#0", "tools"))  # "100% valid (93% the expected calls)" whole
        keep = [s for s in selected if self.catalog.exists(s)]
        self.catalog.selection_set(keep or self.catalog.get_children("")[:1])
        self.installed.delete(*self.installed.get_children(""))
        for m in listing.installed:
            self.installed.insert("", "end", iid=m.name, text=m.name, values=(m.size, m.origin, m.path))
        self.engine.configure(text=listing.engine)
        self.stop_button.configure(state="normal" if listing.engine_running else "disabled")
        self._sync_download_button()

    def _row(self) -> lp.CatalogRow | None:
        sel = self.catalog.selection()
        return self.models.catalog_row(sel[0]) if sel else None

    def _sync_download_button(self) -> None:
        if self.downloading:
            self.download_button.configure(state="disabled")
            return
        row = self._row()
        self.download_button.configure(text=(row.action if row is not None and row.action else "Download"),
                                       state="normal" if row is not None and row.action else "disabled")

    def say(self, text: str, style: str = "danger") -> None:
        self.msg.configure(text=text, bootstyle=style)

    def _work(self, fn: Callable[[], Any], then: Callable[[Any], Any], name: str,
              failed: Callable[[], Any] = lambda: None) -> None:
        """Run `fn` on the worker pool, then `then(its value)`; when it raised, say why and run
        `failed()` (a download takes its progress line away)."""
        def done(future: Future[Any]) -> None:
            if not self.winfo_exists():
                return
            try:
                value = future.result()
            except Cancelled:
                value = None
            except UserFacingError as exc:
                failed()
                self.say(error_text(exc))
                value = None
            except Exception as exc:  # shown, never raised into Tk
                failed()
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
        self.downloading = name = row.name
        self.download_button.configure(state="disabled")
        self.cancel_button.configure(state="normal")
        self.progress.set(0.0)
        self.progress_text.configure(text="Starting the download…")
        pump = self.ui.pump
        self.job = job = self.models.download(name, gguf_button=self.add_button.cget("text"))
        self._work(lambda: job.run(lambda p: pump.post(self._show_progress, p, job),
                                   lambda text: pump.post(self._show_note, text, job)),
                   lambda result: self.progress_text.configure(
                       text=f"{name} is installed." if not result[1] else f"{name} was already installed."),
                   "local-download", failed=lambda: self._clear_progress(job))

    def _clear_progress(self, job: Download | None = None) -> None:
        """No download line or bar left over (a failed `job`'s, or one an action made history);
        a cancelled download that is still stopping keeps its line."""
        if job is None or not job.cancelled:
            self.progress.set(0.0)
            self.progress_text.configure(text="")

    def _show_progress(self, p: DownloadProgress, job: Download) -> None:
        download_progress.show_progress(self, self.progress, self.progress_text, p, job)

    def _show_note(self, text: str, job: Download) -> None:
        download_progress.show_note(self, self.progress_text, text, job)

    def cancel(self) -> None:
        """Stop the download; what was downloaded stays and the next Download resumes it."""
        if not self.downloading or self.job is None:
            return
        self.job.cancel()
        self.downloading = None
        self.cancel_button.configure(state="disabled")
        self.progress_text.configure(text="Download cancelled; what was downloaded is kept. Resume continues it.")
        self._sync_download_button()

    def add_file(self) -> None:
        path = self.ui.dialogs.open_file("Add a GGUF model file", GGUF_TYPES)
        if not path:
            return
        if not self.downloading:
            self._clear_progress()  # the last download's line is history now
        self.say("Checking the file (SHA-256)…", "secondary")
        self.add_button.configure(state="disabled")
        models = self.models
        self._work(lambda: models.add_file(path),
                   lambda model: self.say(f"Added {model.name} ({model.path}).", "secondary"), "local-add")

    def remove(self) -> None:
        sel = self.installed.selection()
        if not sel:
            self.say("Select an installed model first.")
            return
        name = sel[0]
        default = self.app.models.default_model
        question = self.models.removal_question(name, (default.provider, default.id) if default else None)
        if question is None or not self.ui.dialogs.confirm(question, "Remove model"):
            return
        self.remove_button.configure(state="disabled")
        models = self.models
        self._work(lambda: models.remove(name), lambda _none: self.say(f"Removed {name}.", "secondary"),
                   "local-remove")

    def stop(self) -> None:
        self.stop_button.configure(state="disabled")
        self.engine.configure(text="Stopping…")
        self._work(self.models.stop_engine, lambda _stopped: None, "local-stop")
