"""The built-in engine's models as Settings › Local models and the first-run sheet work them
(no Tk): what the page lists (the catalog with Download or Resume, the installed models, the
engine's line), a catalog model's download — run on a worker thread, its progress handed out
as a bar's fraction and a line of text, cancelled from the UI thread with the part kept so the
next download resumes it (even in another session) —, a GGUF file added in place, a model
removed, the engine stopped. The widgets are `ui/local_page.py` and `ui/first_run.py` (the
bar and line: `ui/download_progress.py`); the rows and the engine's line are
`presenters/local_page.py`.

    models = LocalModelsPresenter(app.root)
    job = models.download("qwen2.5-coder-0.5b", gguf_button="Add GGUF file…")
    pump.run_in_worker(lambda: job.run(post_progress, post_note), done)
                                        # -> (model, already installed); raises Cancelled after job.cancel()
    job.cancel()                        # from the UI thread: the transfer stops at its next chunk
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Protocol

from ..errors import UserFacingError, error_text
from ..local import catalog
from ..local.download import DownloadFailed, Progress, parse_spec, pull
from ..local.engine import engine_status, stop_engine
from ..local.models import InstalledModel, LocalModels, human_size
from ..paths import DataRoot
from . import local_page as lp

LOCAL_PROVIDER = "local"  # the built-in engine's provider


@dataclass(frozen=True)
class DownloadProgress:
    """What the progress bar and its line show: `fraction` of the file (0 when the size is
    unknown) and `120.0 MB of 491.4 MB (24%) · 4.2 MB/s · 1 min 28 s left`."""

    fraction: float
    text: str


@dataclass(frozen=True)
class Listing:
    """Settings › Local models at one moment: its rows, the engine's line, whether Stop applies,
    and the problem (already said for the user) when `models/index.json` could not be read."""

    catalog: list[lp.CatalogRow]
    installed: list[lp.InstalledRow]
    engine: str
    engine_running: bool
    problem: str = ""


def _duration(seconds: float) -> str:
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def progress_text(p: Progress) -> str:
    """`120.0 MB of 491.4 MB (24%) · 4.2 MB/s · 1 min 28 s left`."""
    pct = f" ({100 * p.done // p.total}%)" if p.total else ""
    parts = [f"{human_size(p.done)} of {human_size(p.total)}{pct}"]
    if p.speed > 0:
        parts.append(f"{human_size(p.speed)}/s")
    if p.eta is not None:
        parts.append(f"{_duration(p.eta)} left")
    if p.resumed_from:
        parts.append(f"resumed at {human_size(p.resumed_from)}")
    return " · ".join(parts)


def download_progress(p: Progress) -> DownloadProgress:
    return DownloadProgress(p.done / p.total if p.total else 0.0, progress_text(p))


class Cancelled(UserFacingError):
    """The user pressed Cancel during a download (the partial file stays: the next one resumes)."""


class ProgressSink(Protocol):
    def __call__(self, p: Progress, /) -> None: ...


class NoteSink(Protocol):
    def __call__(self, text: str, /) -> None: ...


class CancelCheck(Protocol):
    def __call__(self) -> bool: ...


class CancellableListener:
    """A `download.PullListener` that reports to `on_progress`/`on_note` (worker thread) and
    stops the transfer when `cancelled()` is true, by raising `Cancelled` from the chunk loop."""

    def __init__(self, on_progress: ProgressSink, on_note: NoteSink, cancelled: CancelCheck) -> None:
        self._progress, self._note, self._cancelled = on_progress, on_note, cancelled

    def note(self, text: str) -> None:
        self._note(text)

    def progress(self, p: Progress) -> None:
        if self._cancelled():
            raise Cancelled("The download was cancelled; what was downloaded is kept.",
                            hint="Download again to resume from there.")
        self._progress(p)


class DownloadSink(Protocol):
    def __call__(self, p: DownloadProgress, /) -> None: ...


def _ignore(_value: object, /) -> None:
    pass


class Download:
    """One download of a catalog model (resuming the part an earlier one kept). `run()` works on
    a worker thread and reports through its sinks there; `cancel()` comes from the UI thread."""

    def __init__(self, root: DataRoot, name: str, gguf_button: str) -> None:
        self.root, self.name, self.gguf_button = root, name, gguf_button
        self._cancel = threading.Event()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def cancel(self) -> None:
        """Stop at the next chunk; what was downloaded stays and the next download resumes it."""
        self._cancel.set()

    def run(self, on_progress: DownloadSink = _ignore, on_note: NoteSink = _ignore) -> tuple[InstalledModel, bool]:
        """Download and install, reporting the progress and the other steps (checking,
        installing) on this thread; the model and whether it was already installed.
        `Cancelled` after `cancel()`, UserFacingError when the Hub or the disk refuse (where a GGUF
        file is a way out, it points at the window's `gguf_button`, not at the command line)."""
        listener = CancellableListener(lambda p: on_progress(download_progress(p)), on_note, self._cancel.is_set)
        try:
            return pull(LocalModels(self.root), parse_spec(self.name), listener)
        except DownloadFailed as exc:
            raise UserFacingError(exc.message, hint=f"{exc.retry}, or click \"{self.gguf_button}\" to use a GGUF file "
                                                    "you already have.") from exc


class LocalModelsPresenter:
    """The installed models, the catalog and the engine of one data root."""

    def __init__(self, root: DataRoot) -> None:
        self.root = root

    def _store(self) -> LocalModels:
        return LocalModels(self.root)

    def installed(self) -> list[InstalledModel]:
        """The installed models; none when `models/index.json` cannot be read."""
        try:
            return self._store().installed()
        except UserFacingError:
            return []

    def listing(self, now: float | None = None) -> Listing:
        store = self._store()
        problem = ""
        try:
            installed, partial = store.installed(), store.partial_downloads()
        except UserFacingError as exc:
            installed, partial, problem = [], [], error_text(exc)
        status = engine_status(self.root)
        return Listing(lp.catalog_rows(catalog.CATALOG, installed, partial), lp.installed_rows(installed),
                       lp.engine_text(status, now if now is not None else time.time()), status is not None, problem)

    def catalog_row(self, name: str) -> lp.CatalogRow | None:
        """The catalog's row of `name` (its button: Download, Resume or none), None when unknown."""
        store = self._store()
        rows = lp.catalog_rows(catalog.CATALOG, store.installed(), store.partial_downloads())
        return next((r for r in rows if r.name == name), None)

    def download(self, name: str, gguf_button: str) -> Download:
        """The download of the catalog model `name`, not started: run it on a worker thread.
        `gguf_button` is the window's button that adds a GGUF file (its errors name it)."""
        return Download(self.root, name, gguf_button)

    def add_file(self, path: str, *, reuse: bool = False) -> InstalledModel:
        """Add the GGUF file at `path` in place (its SHA-256 is checked: run it on a worker
        thread); with `reuse`, a file already added in place is that model again."""
        store = self._store()
        if reuse:
            same = next((m for m in store.installed() if m.origin == "in-place" and str(m.path) == path), None)
            if same is not None:
                return same
        return store.add(path)

    def _loaded(self, model: InstalledModel) -> bool:
        """The running engine has `model` loaded."""
        status = engine_status(self.root)
        return status is not None and (status.model_name == model.name or status.model_path == str(model.path))

    def removal_question(self, name: str, default_model: tuple[str, str] | None = None) -> str | None:
        """What Remove asks before it removes `name` (None: no such model): where its file goes,
        that it is the default model (`default_model`: provider and id) and that the engine
        which has it loaded is stopped."""
        model = self._store().find(name)
        if model is None:
            return None
        parts = [f"Remove the model {name}?",
                 ("Its file is deleted." if model.origin in ("downloaded", "copied")
                  else f"Its file stays where it is ({model.path}).")]
        if default_model is not None and default_model[0] == LOCAL_PROVIDER and default_model[1] == model.name:
            parts.append("It is the default model: threads without a model of their own will need another one "
                         "(Settings › Models).")
        if self._loaded(model):
            parts.append("The engine has it loaded and is stopped.")
        return " ".join(parts)

    def remove(self, name: str) -> None:
        """Remove `name`; the engine is stopped first when it has the model loaded (it waits for
        the process to end: a worker thread)."""
        store = self._store()
        model = store.find(name)
        if model is not None and self._loaded(model):
            stop_engine(self.root)
        store.remove(name)

    def stop_engine(self) -> bool:
        """Stop the running engine (it waits for the process to end: a worker thread); False
        when none ran."""
        return stop_engine(self.root)
