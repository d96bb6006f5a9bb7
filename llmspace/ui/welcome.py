"""The welcome view shown when no tab is open (and from Help › Welcome): Start from
Example, Blank thread, Configure models, plus what was detected — API keys in the
environment and local model servers (probed in a background thread after the window shows,
results delivered through the pump). New threads are made by `ThreadStarter`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ..core.examples import catalogue, seed_threads
from ..core.model import Thread
from ..errors import UserFacingError
from ..presenters.welcome import detect_keys, detected_lines, probe_local_servers
from .theme import style_listbox

if TYPE_CHECKING:
    from .app_services import ModelServices
    from .services import ErrorReporter, UiServices
    from .tab_pages import TabPages
    from .tree_view import TreeView

log = logging.getLogger("llmspace.ui")


def example_list() -> list[tuple[str, str]]:
    """(file stem, label) of every example, without building the threads."""
    return [(e.file_stem, e.label) for e in catalogue()]


def example_threads() -> list[tuple[str, Thread]]:
    return seed_threads()


class ExamplesDialog(tb.Toplevel):
    """New from Examples…: pick one example from a list; `create(stem)` makes the thread."""

    def __init__(self, master: Any, create: Callable[[str], str | None]) -> None:
        super().__init__(title="New from Examples", master=master, size=(360, 280))
        self.on_create = create
        self.items = example_list()
        import tkinter as tk

        self.listbox = style_listbox(tk.Listbox(self, activestyle="none"))
        for _, label in self.items:
            self.listbox.insert("end", label)
        self.listbox.pack(fill="both", expand=True, padx=8, pady=8)
        if self.items:
            self.listbox.selection_set(0)
        self.listbox.bind("<Double-Button-1>", lambda e: self.create())
        self.listbox.bind("<Return>", lambda e: self.create())
        self.bind("<Escape>", lambda e: self.destroy())
        bar = tb.Frame(self)
        bar.pack(pady=(0, 8))
        tb.Button(bar, text="Create", bootstyle="primary", command=self.create).pack(side="left", padx=4)
        tb.Button(bar, text="Cancel", bootstyle="secondary", command=self.destroy).pack(side="left", padx=4)

    def create(self) -> str | None:
        sel = self.listbox.curselection()
        if not sel:
            return None
        stem = self.items[sel[0]][0]
        self.destroy()
        return self.on_create(stem)


class ThreadStarter:
    """New threads from the welcome view and File › New from Examples…: made at the top of
    the workspace, selected in the tree and opened in a tab; an error is shown, not raised."""

    def __init__(self, master: Any, errors: ErrorReporter, tree: TreeView, tabs: TabPages) -> None:
        self.master, self.errors, self.tree, self.tabs = master, errors, tree, tabs

    def example(self, stem: str | None = None) -> Any:
        """A thread from an example (opens the chooser when `stem` is None)."""
        if stem is None:
            return ExamplesDialog(self.master, self.example)
        examples = example_threads()
        match = next((t for s, t in examples if s == stem.strip()), None)
        if match is None:
            self.errors.show(f"There is no example named {stem!r}.")
            return None
        return self._new(lambda: self.tree.p.new_file(None, stem.strip(), match))

    def blank(self) -> str | None:
        return self._new(lambda: self.tree.p.new_file(None))

    def _new(self, make: Callable[[], str]) -> str | None:
        try:
            rel = make()
        except UserFacingError as exc:
            self.errors.show(str(exc))
            return None
        self.tree.redraw(select=rel)
        self.tabs.open_thread(rel)
        return rel


class WelcomeView(tb.Frame):
    """Empty state of the right-hand side."""

    def __init__(self, master: Any, ui: UiServices, app: ModelServices, starter: ThreadStarter,
                 open_settings: Callable[[], Any]) -> None:
        super().__init__(master, padding=40)
        self.ui, self.app, self.starter = ui, app, starter
        tb.Label(self, text="Welcome to LLM Space", font=("TkHeadingFont", 20, "bold")).pack(anchor="w")
        tb.Label(self, text="Write, run, debug and evaluate prompts and agents on local files.",
                 bootstyle="secondary").pack(anchor="w", pady=(4, 20))
        row = tb.Frame(self)
        row.pack(anchor="w")
        self.btn_example = tb.Button(row, text="Start from Example", bootstyle="primary", command=self.start_example)
        self.btn_example.pack(side="left", padx=(0, 8))
        self.btn_blank = tb.Button(row, text="Blank thread", bootstyle="secondary", command=self.blank)
        self.btn_blank.pack(side="left", padx=(0, 8))
        self.btn_models = tb.Button(row, text="Configure models", bootstyle="info-outline", command=open_settings)
        self.btn_models.pack(side="left")
        self.examples = tb.Frame(self)
        self.examples.pack(anchor="w", pady=(16, 0), fill="x")
        self.detected = tb.Label(self, text="", justify="left", bootstyle="secondary")
        self.detected.pack(anchor="w", pady=(20, 0))
        # Long lines (the model hint names three choices) wrap at the page's width instead of
        # running off its right edge.
        self.bind("<Configure>", self._wrap_detected, add="+")
        self.env_keys = detect_keys()
        self.local: list[Any] | None = None

    def refresh(self) -> None:
        for w in self.examples.winfo_children():
            w.destroy()
        for stem, label in example_list()[:8]:
            tb.Button(self.examples, text=label, bootstyle="link",
                      command=lambda s=stem: self.starter.example(s)).pack(anchor="w")
        self._show_detected()

    def _wrap_detected(self, event: Any) -> None:
        if event.widget is self:
            self.detected.configure(wraplength=max(200, event.width - 80))

    def _show_detected(self) -> None:
        default, configured = self._configured()
        self.detected.configure(text="\n".join(detected_lines(self.env_keys, self.local, default, configured)))

    def _configured(self) -> tuple[tuple[str, str] | None, list[str]]:
        """The default model and the providers that can run (a key in the settings, or a
        custom provider), from the model settings (`settings/models.py`): the app's own
        `ModelSettings` once something has loaded it, else a fresh read by the same service, so
        that showing the welcome never loads (and caches) `app.models` before the user has
        configured a provider."""
        app = self.app
        models = app.__dict__.get("models")  # a loaded cached_property: the settings runs use
        if models is None:
            if not app.root.settings_file("models").exists():
                return None, []  # nothing configured yet (and nothing to import while the window starts)
            from ..settings.models import ModelSettings

            models = ModelSettings(app.root)
        env = {provider for provider, _var in self.env_keys}
        try:
            ready = [v.name for v in models.providers() if v.id not in env and not v.local
                     and (not v.builtin or v.needs_key) and v.enabled_models() and models.is_configured(v.id)]
        except Exception:  # a settings file the page cannot read: the Settings dialog says why
            log.debug("could not list configured providers", exc_info=True)
            ready = []
        model = models.default_model
        return ((model.provider, model.id) if model is not None else None), ready

    def start_probe(self) -> None:
        def done(future: Future[list[Any]]) -> None:
            try:
                found = future.result()
            except Exception:
                log.debug("probing local model servers failed", exc_info=True)
                return
            self._probed(found)

        self.ui.pump.run_in_worker(probe_local_servers, done, name="local-server-probe")

    def _probed(self, found: list[Any]) -> None:
        self.local = found
        if self.winfo_exists():
            self._show_detected()

    def start_example(self) -> None:
        self.starter.example()

    def blank(self) -> str | None:
        return self.starter.blank()


class WelcomeDialog(tb.Toplevel):
    """Help › Welcome: the same view in its own window."""

    def __init__(self, ui: UiServices, app: ModelServices, starter: ThreadStarter, open_settings: Callable[[], Any],
                 local: list[Any] | None) -> None:
        super().__init__(title="Welcome", master=ui.root)
        self.bind("<Escape>", lambda e: self.destroy())
        view = WelcomeView(self, ui, app, starter, open_settings)
        view.pack(fill="both", expand=True)
        view.refresh()
        view.local = local  # what the window's own view has probed
        view._show_detected()
