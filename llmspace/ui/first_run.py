"""The first-run sheet: Run (or the welcome page's "Configure models") with no usable model
opens it. One window offers: run the catalog's default model locally (size and licence shown;
downloaded only when its button is clicked, with progress on a row of its own under the
description and a Cancel that keeps the part downloaded so the next click resumes; a failed
download says why, pointing at "Use a GGUF file…" where that is a way out, and takes the
progress away, as does any other choice), an installed local model, a GGUF file (a picker), a
detected Ollama / LM Studio / llama.cpp server, or an API key. The choice becomes the thread's
model and the default model, then `on_chosen()` runs (Run starts the run); Cancel (or Escape)
closes it and changes nothing. Downloads, hashing and server questions run on the worker pool
and report through the pump. Started by `make run` while the built-in engine still builds in
the background, it says how long is left and keeps the choices that need the engine closed,
reading the build's small status file every few seconds (`local/build_status.py`); when the
build has installed the engine they open, and the engine is found without a restart (it is
imported on first use). Logic in `presenters/first_run.py`; the download and the GGUF file
are `presenters/local_models.py`'s.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ..errors import UserFacingError, error_text
from ..presenters import first_run as fr
from ..presenters.local_models import Cancelled, Download, DownloadProgress, LocalModelsPresenter
from ..presenters.welcome import detect_keys, probe_local_servers
from . import download_progress, tkvars

if TYPE_CHECKING:
    from .app_services import ModelServices
    from .services import UiServices

GGUF_TYPES = (("GGUF model", "*.gguf"), ("All files", "*"))
BUILD_POLL_MS = 3000  # how often the sheet reads the engine build's status file


def needs_model(app: ModelServices, thread_model: Any) -> bool:
    """No model can run a thread saved with `thread_model` (the installed local models counted)."""
    models = app.models
    if not models.was_refreshed(fr.LOCAL_PROVIDER):
        models.refresh_local([fr.LOCAL_PROVIDER])  # reads models/index.json: no request
    return app.providers.choose(thread_model, refresh=True).model is None


class FirstRunSheet(tb.Toplevel):
    """Choose how to get a model. `thread` is the editor presenter of the thread to run (None
    from the welcome page); `on_chosen()` runs after a choice was adopted."""

    def __init__(self, ui: UiServices, app: ModelServices, thread: fr.ThreadModel | None,
                 on_chosen: Callable[[], Any] = lambda: None) -> None:
        super().__init__(title="Choose a model to run", master=ui.root, resizable=(True, True))
        self.transient(ui.root)
        self.ui, self.app, self.thread, self.on_chosen = ui, app, thread, on_chosen
        self.models = LocalModelsPresenter(app.root)
        self.servers: list[Any] | None = None
        self.working = False
        self.downloading = False
        self.worker: Future[tuple[str, str]] | None = None  # the last job on the worker pool
        self.job: Download | None = None  # the last download
        self.bind("<Escape>", lambda e: self.cancel())
        self.protocol("WM_DELETE_WINDOW", self.cancel)
        tb.Label(self, text="No model can run this thread yet", font=("TkDefaultFont", 13, "bold")).pack(
            anchor="w", padx=14, pady=(12, 2))
        tb.Label(self, text="Pick one way to get a model. Nothing is downloaded until you click.",
                 wraplength=520, justify="left").pack(anchor="w", padx=14)
        self.build = fr.EngineBuild()
        self.engine_label = tb.Label(self, text="", bootstyle="warning", wraplength=520, justify="left")
        self.engine_label.pack(anchor="w", padx=14, pady=(6, 0))
        self.body = tb.Frame(self, padding=(14, 8))
        self.body.pack(fill="both", expand=True)
        self.key_area = tb.Frame(self, padding=(14, 0))  # the API key form (not redrawn with the options)
        self.key_area.pack(fill="x")
        self.progress = tkvars.DoubleVar(self, 0.0)
        self.progress_text = tb.Label(self, text="", bootstyle="secondary", wraplength=520, justify="left")
        self.message = tb.Label(self, text="", bootstyle="danger", wraplength=520, justify="left")
        self.message.pack(anchor="w", padx=14)
        row = tb.Frame(self, padding=(14, 4, 14, 12))
        row.pack(fill="x", side="bottom")
        self.cancel_button = tb.Button(row, text="Cancel", bootstyle="secondary", command=self.cancel)
        self.cancel_button.pack(side="right")
        self.buttons: dict[str, tb.Button] = {}
        self.closed: set[str] = set()  # the keys of the buttons whose choice waits for the engine
        self.options: list[fr.Option] = []
        self.draw()
        ui.pump.run_in_worker(probe_local_servers, self._probed, name="first-run-probe")
        if self.build.missing:
            self.after(BUILD_POLL_MS, self._poll_build)
        self.focus_set()

    # ---- drawing -----------------------------------------------------------------------------
    def draw(self) -> None:
        for w in self.body.winfo_children():
            w.destroy()
        self.options = fr.choices(self.models, self.servers or [], detect_keys(), self.build)
        self.engine_label.configure(text=self.build.note(time.time()))
        self.buttons = {}
        self.closed = set()
        for i, opt in enumerate(self.options):  # three rows each: button, description, (download) bar
            key = f"{opt.kind}:{opt.provider}:{opt.model}"
            button = tb.Button(self.body, text=opt.label, bootstyle="primary" if i == 0 else "primary-outline",
                               command=lambda o=opt: self.choose(o))
            button.grid(row=3 * i, column=0, sticky="w", pady=(6, 0))
            tb.Label(self.body, text=opt.detail, bootstyle="secondary", wraplength=500, justify="left").grid(
                row=3 * i + 1, column=0, sticky="w")
            self.buttons[key] = button
            if not opt.enabled:
                self.closed.add(key)
            if opt.kind == "download":
                self.bar = tb.Progressbar(self.body, variable=self.progress, maximum=1.0, bootstyle="info")
                self.download_row = 3 * i + 2  # under the description, never over it
        if self.servers is None:
            tb.Label(self.body, text="Looking for local model servers…", bootstyle="secondary").grid(
                row=3 * len(self.options), column=0, sticky="w", pady=(6, 0))
        self._set_busy(self.working)

    def button(self, kind: str) -> tb.Button:
        """The button of the first option of `kind` (tests press it)."""
        return next(b for k, b in self.buttons.items() if k.startswith(kind + ":"))

    def _probed(self, future: Future[list[Any]]) -> None:
        try:
            self.servers = future.result()
        except Exception:
            self.servers = []
        if self.winfo_exists() and not self.working:
            self.draw()

    def _set_busy(self, busy: bool) -> None:
        self.working = busy
        for key, b in self.buttons.items():
            b.configure(state="disabled" if busy or key in self.closed else "normal")

    def _poll_build(self) -> None:
        """Read the engine build's status again: the note says the time left; the choices open
        when the engine is installed (a changed state redraws them)."""
        if not self.winfo_exists():
            return
        changed = self.build.poll()
        if changed and not self.working:
            self.draw()
        else:
            self.engine_label.configure(text=self.build.note(time.time()))
        if self.build.missing:
            self.after(BUILD_POLL_MS, self._poll_build)

    def say(self, text: str, style: str = "danger") -> None:
        self.message.configure(text=text, bootstyle=style)

    # ---- choices -----------------------------------------------------------------------------
    def choose(self, opt: fr.Option) -> None:
        if self.working or not opt.enabled:
            return
        self.say("")
        self._hide_download()  # a cancelled or failed download's line is history now
        match opt.kind:
            case "installed":
                self.adopt(opt.provider, opt.model)
            case "download":
                self.download(opt)
            case "gguf":
                self.pick_gguf()
            case "server":
                self.use_server(opt)
            case "key":
                self.enter_key()

    def adopt(self, provider: str, model_id: str) -> None:
        try:
            fr.adopt(self.app.models, self.thread, provider, model_id)
        except UserFacingError as exc:
            self.say(error_text(exc))
            return
        self.ui.status.set(f"Model: {provider}/{model_id} (also the default model).")
        self.destroy()
        self.on_chosen()

    def _work(self, fn: Callable[[], tuple[str, str]], name: str) -> None:
        """Run `fn` (returning provider, model) on the worker pool, then adopt its choice."""
        self._set_busy(True)

        def done(future: Future[tuple[str, str]]) -> None:
            if not self.winfo_exists():
                return
            self._set_busy(False)
            was_downloading, self.downloading = self.downloading, False
            self.cancel_button.configure(text="Cancel")
            try:
                provider, model = future.result()
            except Cancelled:
                return  # cancel() has said so
            except Exception as exc:  # shown, never raised into Tk
                if was_downloading:
                    self._hide_download()  # the error says what happened: no "Starting the download…" left
                self.say(error_text(exc) if isinstance(exc, UserFacingError)
                         else error_text(exc, self.ui.errors.log_file()))
                return
            self.adopt(provider, model)

        self.worker = self.ui.pump.run_in_worker(fn, done, name=name)

    def download(self, opt: fr.Option) -> None:
        if self.worker is not None and not self.worker.done():
            self.say("The cancelled download is still stopping; click again in a moment.", "secondary")
            return
        self.progress.set(0.0)
        self.bar.grid(row=self.download_row, column=0, sticky="ew", pady=(2, 0))
        self.body.columnconfigure(0, weight=1)
        self.progress_text.pack(anchor="w", padx=14, before=self.message)
        self.progress_text.configure(text="Starting the download…")
        self.cancel_button.configure(text="Cancel download")
        models, pump = self.app.models, self.ui.pump
        self.job = job = self.models.download(opt.model, gguf_button=self.button("gguf").cget("text"))

        def work() -> tuple[str, str]:
            model, _already = job.run(lambda p: pump.post(self._show_progress, p, job),
                                      lambda text: pump.post(self._show_note, text, job))
            models.refresh_local([fr.LOCAL_PROVIDER])
            return fr.LOCAL_PROVIDER, model.name

        self._work(work, "first-run-download")
        self.downloading = True

    def _hide_download(self) -> None:
        """Take the download's bar and line away (a new download shows them again)."""
        if hasattr(self, "bar"):
            self.bar.grid_remove()
        self.progress_text.configure(text="")
        self.progress_text.pack_forget()

    def _show_progress(self, p: DownloadProgress, job: Download) -> None:
        download_progress.show_progress(self, self.progress, self.progress_text, p, job)

    def _show_note(self, text: str, job: Download) -> None:
        download_progress.show_note(self, self.progress_text, text, job)

    def pick_gguf(self) -> None:
        path = self.ui.dialogs.open_file("Choose a GGUF model file", GGUF_TYPES)
        if not path:
            return
        local, models = self.models, self.app.models
        self.say("Checking the file (SHA-256)…", "secondary")

        def work() -> tuple[str, str]:
            model = local.add_file(path, reuse=True)
            models.refresh_local([fr.LOCAL_PROVIDER])
            return fr.LOCAL_PROVIDER, model.name

        self._work(work, "first-run-gguf")

    def use_server(self, opt: fr.Option) -> None:
        models = self.app.models
        self.say(f"Asking {opt.label.removeprefix('Use ')} for its models…", "secondary")

        def work() -> tuple[str, str]:
            models.refresh_local([opt.provider])
            view = models.provider(opt.provider)
            names = [m.id for m in view.enabled_models()] if view is not None else []
            return opt.provider, fr.first_server_model(names, view.name if view is not None else opt.provider)

        self._work(work, "first-run-server")

    def enter_key(self) -> None:
        """An API key: the provider and the key, saved as Settings › Models does."""
        views = [v for v in self.app.models.providers() if v.needs_key and v.enabled_models()]
        names = [v.name for v in views]
        for w in self.key_area.winfo_children():
            w.destroy()
        box = tb.Labelframe(self.key_area, text="API key", padding=6)
        box.pack(fill="x", pady=(8, 0))
        provider = tkvars.StringVar(self, names[0] if names else "")
        tb.Combobox(box, values=names, textvariable=provider, state="readonly", width=18).pack(side="left")
        key = tkvars.StringVar(self, "")
        self.key_entry = entry = tb.Entry(box, textvariable=key, show="•", width=30)
        entry.pack(side="left", padx=4)

        def save() -> None:
            view = next((v for v in views if v.name == provider.get()), None)
            value = key.get().strip()
            if view is None or not value:
                self.say("Pick a provider and paste its key (or $ENV_VAR).")
                return
            try:
                self.app.models.set_api_key(view.id, value)
            except UserFacingError as exc:
                self.say(error_text(exc))
                return
            self.adopt(view.id, view.enabled_models()[0].id)

        self.key_button = tb.Button(box, text="Save and use", bootstyle="primary", command=save)
        self.key_button.pack(side="left")
        entry.bind("<Return>", lambda e: save())
        entry.focus_set()

    def cancel(self) -> None:
        """Cancel a download in progress (what was downloaded stays, for resuming), else close
        the sheet without changing anything."""
        if self.downloading and self.job is not None and not self.job.cancelled:
            self.job.cancel()
            self._set_busy(False)
            self.downloading = False
            self.cancel_button.configure(text="Cancel")
            self.progress_text.configure(text="Download cancelled; what was downloaded is kept. Click again to resume.")
            return
        if self.job is not None:
            self.job.cancel()
        self.destroy()
