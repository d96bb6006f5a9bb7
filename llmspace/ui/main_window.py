"""The main window, and the composition root of the desktop UI: the sidebar on the left (Files,
the workspace tree, | Traces, `ui/traces_panel.py`),
thread tabs on the right (a welcome view when none is open), a menu bar with Ctrl shortcuts
(`ui/menus.py`), and a status bar.

Here the parts are built and wired, each with only what it uses: the UI services
(`ui/services.UiServices`: root, pump, dialogs, status bar, error reporter, toasts), the
App's typed services, and the components it needs (`tab_pages`, `tree_view`, …). No part
gets the window itself, except `ui/menus.Menus` through the narrow `MenuHost`. The
components: `self.frame` (`ui/window_frame.py`: size, position, saved state),
`self.appearance` (theme, rendering, zoom), `self.switches` (run switches), `self.tree_view`,
`self.traces_panel`,
`self.tab_pages` (`ui/tab_pages.TabPages`: tabs, pages, editors), `self.welcome`,
`self.starter` (new threads), `self.installer` (plugin ZIPs), `self.drops`, `self.menus`, and
`self.evals` (the Evaluations menu, `ui/evals/actions.py`, built on first use).
The palette builds its list itself (`ui/palette.py`).

Editors are built lazily: a restored tab gets its editor when first selected, so start-up
cost does not grow with the number of open tabs.
"""

from __future__ import annotations

import logging
import os
import time
import webbrowser
from collections.abc import Callable
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ..errors import UserFacingError, error_text
from ..presenters.state import StateStore, UiState
from ..presenters.tabs import TabsPresenter
from ..presenters.traces_panel import TracesPanelPresenter
from ..presenters.tree import TreePresenter
from . import theme as themes
from .appearance import Appearance
from .dialogs import Dialogs
from .focus_ring import FocusRing
from .keyboard import Region, Regions, TabKeys
from .menus import Menus
from .panes import PaneKeeper
from .plugin_install import DropOverlay, PluginInstaller
from .pump import Pump
from .services import ErrorReporter, RunSwitches, UiServices
from .status_bar import StatusBar
from .tab_pages import TabPages, thread_exists
from .toasts import Toasts
from .traces_panel import TracesPanel
from .tree_view import TreeView
from .welcome import ThreadStarter, WelcomeView
from .window_frame import WindowFrame

if TYPE_CHECKING:
    from ..app import App
    from ..presenters.editor import EditorPresenter
    from ..presenters.plugins_page import PluginsPagePresenter
    from .editor.context import EditorContext
    from .evals.actions import EvalActions
    from .mcp_elicitation import AppElicitor
    from .share_actions import ShareActions
    from .storage_actions import StorageActions

log = logging.getLogger("llmspace.ui")


class MainWindow:
    """Owns the root window and builds every top-level part."""

    def __init__(self, app: App, *, root: Any = None, dialogs: Dialogs | None = None) -> None:
        """`root`: an existing ttkbootstrap Window (tests share one); `dialogs`: scripted
        answers instead of modal dialogs (tests)."""
        self.app = app
        store = StateStore(app.root)
        win_state, ui_state = store.load_window(), store.load_ui()
        if root is None:
            root = tb.Window(title="LLM Space", theme=themes.theme_name(ui_state.theme))
        else:
            root.style.theme_use(themes.theme_name(ui_state.theme))
        self.root = root
        self.frame = WindowFrame(root, store, win_state, ui_state, self._collect_ui_state)
        themes.style_sashes(root)
        self.dialogs = dialogs if dialogs is not None else Dialogs(root, start_dir=lambda: app.workspace.root)
        self.pump = Pump(root, executor=app.workers)
        self.pump.start()
        self.frame.restore()
        self.status = StatusBar(root)
        self.status.pack(side="bottom", fill="x")
        self.errors = ErrorReporter(self.status, self.dialogs, lambda: getattr(app, "log_file", None))
        self.ui = UiServices(root, self.pump, self.dialogs, self.status, self.errors, Toasts(root, self.status))
        self.switches = RunSwitches(root, ui_state.react, ui_state.auto_run_tools, self.state_changed)
        self.appearance = Appearance(root, self.frame.state, ui_state.theme, ui_state.rendering, self.status,
                                     self._editors, self.state_changed, markdown=ui_state.markdown)
        self._build()
        self.menus = Menus(self, self.tree_view, self.tab_pages, self.appearance, self.switches, self.frame,
                           app.registries.commands)
        self.tab_keys = TabKeys(root, self.status.show_mode)  # Tab leaves text boxes; Ctrl+M
        self.regions = Regions(root, self.focus_regions)  # F6 / Shift+F6
        self.focus_ring = FocusRing.install(root)
        themes.style_selection(root)
        themes.restyle_menus(root)  # menus follow the theme (and are readable) from the start
        if store.problems:  # an unreadable window.json / ui-state.json: say so, keep the file
            self.status.set(store.problems[0])
        self.root.protocol("WM_DELETE_WINDOW", self.quit)
        self.root.report_callback_exception = self.errors.callback_error
        self.frame.watch()

    def _build(self) -> None:
        root, ui, app = self.root, self.ui, self.app
        self.paned = tb.Panedwindow(root, orient="horizontal")
        self.paned.pack(fill="both", expand=True)
        ws = app.workspace
        try:
            ws.seed_examples()
        except Exception:
            log.exception("seeding the workspace failed")
        self.tree_p = TreePresenter(ws, self.frame.ui_state.expanded)
        self.sidebar = tb.Notebook(self.paned)  # Files | Traces
        self.tree_view = TreeView(self.sidebar, ui, self.tree_p, on_change=self.state_changed,
                                  on_drop=lambda paths: self.drops.route(paths))
        self.traces_panel = TracesPanel(self.sidebar, ui, TracesPanelPresenter(app.trace_projects, ws),
                                        open_link=webbrowser.open, thread_written=self._open_new_thread)
        self.sidebar.add(self.tree_view, text="Files")
        self.sidebar.add(self.traces_panel, text="Traces")
        self.installer = PluginInstaller(ui, self.plugins_presenter, self.open_settings)
        # enabled after the window maps: ZIPs install, other files import into the tree
        self.drops = DropOverlay(root, self.paned, self.installer.install, self.tree_view.import_files)
        self.paned.add(self.sidebar, weight=1)
        self.right = tb.Frame(self.paned)
        self.paned.add(self.right, weight=4)
        self.pane_keeper = PaneKeeper(self.paned, [0.2, 0.8], [160, 560])  # the tree keeps its share
        self.notebook = tb.Notebook(self.right)
        saved = TabsPresenter(self.frame.ui_state.open_tabs, self.frame.ui_state.active_tab)
        existing = [t for t in saved.tabs if thread_exists(ws, t)]
        self.tab_pages = TabPages(ui, ws, self.notebook, TabsPresenter(existing, saved.active), self.tree_view,
                                  editor_context=self._editor_context(), show_right=self.show_right,
                                  on_change=self.state_changed)
        self.tree_view.tabs = self.traces_panel.tabs = self.tab_pages
        self.tree_view.share = lambda rel: self.share_actions.share(rel)  # the tree's Share…
        # a workbench tab is named after its trace and shows its source
        self.notebook.bind("<<NotebookTabChanged>>", lambda e: root.after_idle(self.traces_panel.show_sources), add=True)
        root.after_idle(self.traces_panel.show_sources)  # the tabs restored
        self.starter = ThreadStarter(root, ui.errors, self.tree_view, self.tab_pages)
        self.welcome = WelcomeView(self.right, ui, app, self.starter, self.configure_models)
        self.tree_p.refresh()
        self.tree_view.redraw()
        for rel in self.tabs.tabs:
            self.tab_pages.add_page(rel)
        self.show_right()
        if self.tabs.active:
            self.notebook.select(self.pages[self.tabs.active])
        self.sidebar_visible = True

    @cached_property
    def plugins_presenter(self) -> PluginsPagePresenter:
        """The plugins as File › Install Plugin… and Settings › Plugins list them (the App's
        plugin service is built on first use)."""
        from ..presenters.plugins_page import PluginsPagePresenter

        return PluginsPagePresenter(self.app)

    @cached_property
    def elicitor(self) -> AppElicitor:
        """Answers MCP servers' requests for input during a run's tool calls, in a dialog."""
        from .mcp_elicitation import AppElicitor

        return AppElicitor(self.ui.pump, self.root)

    def _editor_context(self) -> EditorContext:
        """What every editor tab is built with: the App's services it uses, bound here (each
        read from the App when used), and what the tabs and the tree do for an editor."""
        from ..presenters import catalog
        from ..presenters.run import RunPresenter
        from .editor.context import Catalog, EditorContext

        app = self.app
        pickers = Catalog(model_label=partial(catalog.run_model_label, app), model_choices=partial(catalog.model_choices, app),
                          mcp_servers=partial(catalog.mcp_servers, app), mcp_tools=partial(catalog.mcp_tools, app),
                          plugin_tool_groups=lambda tools: catalog.plugin_tool_groups(tools, app))
        return EditorContext(self.ui, app.workspace, pickers, self.switches, self.appearance.render_var.get,
                             run_presenter=lambda p: RunPresenter(p, app, self.elicitor), skills=lambda: app.skills,
                             load_trace=lambda name: app.traces.load(name), offer_model=self._offer_model,
                             rename_thread=self._rename_thread, open_thread=self._open_new_thread,
                             markdown=self.appearance.markdown_var.get, share=lambda rel: self.share_actions.share(rel))

    def _rename_thread(self, rel: str, title: str) -> str:
        """An editor's title edit: rename the file; the tab and the tree follow. A trace's
        workbench keeps its path: the trace is renamed (the original's rule)."""
        if self.traces_panel.is_workbench(rel):
            return self.traces_panel.rename_workbench(rel, title)
        new_rel = self.tab_pages.rename_entry(rel, title)
        self.tree_view.redraw(select=new_rel)
        return new_rel

    def _open_new_thread(self, rel: str) -> None:
        """A thread an editor wrote (a forked run): into the tree, and open in a tab."""
        self.tree_view.refresh()
        self.tab_pages.open_thread(rel)

    def _offer_model(self, presenter: EditorPresenter, then: Callable[[], object]) -> bool:
        """Before a run: the first-run sheet (`ui/first_run.py`) when no model can run the
        thread, which runs `then` once one is chosen (True: the sheet is open)."""
        from .first_run import FirstRunSheet, needs_model

        try:
            if not needs_model(self.app, presenter.thread.model):
                return False
        except UserFacingError:
            return False  # the run says what is wrong
        FirstRunSheet(self.ui, self.app, presenter, on_chosen=then)
        return True

    @cached_property
    def storage(self) -> StorageActions:
        """File › Import from Storage…, Save to Storage… and `llm-space://` links (built on first use)."""
        from .storage_actions import StorageActions

        return StorageActions(self.ui, self.app, self.tab_pages, self.tree_view)

    @cached_property
    def share_actions(self) -> ShareActions:
        """Share…, Open Shared Link…, Sign in with GitHub… (`ui/share_actions.py`)."""
        from ..presenters.share import SharePresenter
        from .share_actions import ShareActions

        app = self.app
        return ShareActions(self.ui, SharePresenter(lambda: app.sharing), self.tab_pages, self.tree_view)

    # -- tabs (the `tab_pages` component) --------------------------------------------------
    @property
    def tabs(self) -> TabsPresenter:
        return self.tab_pages.tabs

    @property
    def pages(self) -> dict[str, tb.Frame]:
        return self.tab_pages.pages

    @property
    def editors(self) -> dict[str, Any]:
        return self.tab_pages.editors

    def _editors(self) -> list[Any]:
        """The editors built so far (a tab that failed to load has none)."""
        return [ed for ed in self.editors.values() if ed is not None]

    def open_thread(self, rel: str) -> Any:
        """Open (or focus) the tab of `rel`; returns its editor view (None while loading)."""
        return self.tab_pages.open_thread(rel)

    def focus_regions(self) -> list[Region]:
        """What F6 cycles through: the tree, then the active editor's regions (settings,
        messages, history) or the welcome view."""
        tree = self.tree_view.tree
        regions = [Region("tree", [self.tree_view], lambda: tree)]
        editor = self.tab_pages.active_editor() if self.tabs.tabs else None
        if editor is not None:
            regions.extend(editor.regions())
        else:
            regions.append(Region("welcome", [self.welcome], lambda: self.welcome.btn_example))
        return regions

    def show_right(self) -> None:
        """The notebook when tabs are open, else the welcome view."""
        if self.tabs.tabs:
            self.welcome.pack_forget()
            self.notebook.pack(fill="both", expand=True)
        else:
            self.notebook.pack_forget()
            self.welcome.pack(fill="both", expand=True)
            self.welcome.refresh()

    # -- the window's own commands (the menus' `MenuHost`) -----------------------------------
    def reveal_workspace(self) -> None:
        self.tree_view.tree.selection_set(())
        self.tree_view.reveal()

    def open_palette(self) -> Any:
        from .palette import open_palette
        from .plugin_commands import run_plugin_command

        return open_palette(self.root, self.app.registries.commands,
                            lambda command, args: run_plugin_command(self.ui, self.tab_pages, command, args))

    def open_settings(self) -> Any:
        from ..presenters.catalog import model_choices
        from .settings_dialog import SettingsDialog

        dialog = SettingsDialog(self.ui, self.app, partial(model_choices, self.app), self.plugins_presenter, self.appearance,
                                self.installer, self.reveal_workspace)
        dialog.bind("<Destroy>", lambda e: self.models_changed() if e.widget is dialog else None, add=True)
        return dialog

    def configure_models(self) -> Any:
        """The welcome page's "Configure models": the first-run sheet (`ui/first_run.py`) while no
        model can run, else Settings."""
        from .first_run import FirstRunSheet, needs_model

        if needs_model(self.app, None):
            return FirstRunSheet(self.ui, self.app, None, on_chosen=self.models_changed)
        return self.open_settings()

    def models_changed(self) -> None:
        """Providers, keys or the default model changed: every model row and the welcome
        view say again which model runs."""
        if self.frame.closed:
            return
        for ed in self._editors():
            if ed.winfo_exists():
                ed.refresh_model()
        if self.welcome.winfo_ismapped():
            self.welcome.refresh()

    def import_from_storage(self) -> Any:
        return self.storage.import_from_storage()

    def save_to_storage(self) -> Any:
        return self.storage.save_to_storage()

    def open_link(self, url: str) -> None:
        """Import the thread an `llm-space://` link names and open it: a shared link in the Open
        Shared Link dialog (Cancel; a newer link cancels it), any other through its plugin storage."""
        self.root.deiconify()
        self.root.lift()
        if self.share_actions.p.is_shared(url):
            self.share_actions.open_shared_link(url, start=True)
        else:
            self.storage.open_link(url)

    def install_plugins(self, paths: list[str] | None = None) -> bool:
        """File › Install Plugin…: pick ZIPs (or install `paths`) off the UI thread."""
        return self.installer.install(paths)

    def show_welcome(self) -> None:
        from .welcome import WelcomeDialog

        WelcomeDialog(self.ui, self.app, self.starter, self.configure_models, self.welcome.local)

    @cached_property
    def evals(self) -> EvalActions:
        """The Evaluations menu (`ui/evals/actions.py`, built on first use)."""
        from .evals.actions import EvalActions

        return EvalActions(self.ui, self.app, self.open_thread, lambda: self.tree_view.refresh(True),
                           lambda: self.tabs.active)

    def new_evaluation(self) -> Any:
        return self.evals.new_evaluation()

    def open_results(self) -> Any:
        return self.evals.pick_results()

    def open_eval_file(self) -> Any:
        return self.evals.open_eval_file()

    def compare_results(self) -> Any:
        return self.evals.compare()

    def optimize_prompt(self) -> Any:
        return self.evals.pick_optimize()

    def about(self) -> None:
        from .. import __version__ as version

        self.dialogs.info(f"LLM Space for Python {version}\nData: {self.app.root.root}", "About LLM Space")

    def toggle_sidebar(self) -> None:
        if self.sidebar_visible:
            self.paned.forget(self.sidebar)
        else:
            self.paned.insert(0, self.sidebar, weight=1)
            self.root.after_idle(self.pane_keeper.apply)
        self.sidebar_visible = not self.sidebar_visible

    # -- saved state -----------------------------------------------------------------------
    def state_changed(self) -> None:
        self.frame.changed()

    def _collect_ui_state(self, u: UiState) -> None:
        """What ui-state.json keeps, asked at save time (`ui/window_frame.py`)."""
        u.theme = self.appearance.theme_var.get()
        u.open_tabs = list(self.tabs.tabs)
        u.active_tab = self.tabs.active
        u.expanded = sorted(self.tree_p.expanded)
        u.react = bool(self.switches.react.get())
        u.auto_run_tools = bool(self.switches.auto_run.get())
        u.rendering = self.appearance.render_var.get()
        u.markdown = bool(self.appearance.markdown_var.get())

    # -- closing ---------------------------------------------------------------------------
    def busy_work(self) -> list[str]:
        """What closing the window would cut short: the runs of open threads and the
        evaluations still going."""
        work = [f"the run of {ed.p.rel}" for ed in self._editors() if ed.run.running]
        evals = self.__dict__.get("evals")
        n = sum(1 for run in evals.runs if not run.done()) if evals is not None else 0
        if n:
            work.append(f"{n} running evaluation{'s' if n != 1 else ''}")
        return work

    def _wait_for_evaluations(self, timeout: float = 20.0) -> None:
        """After `stop_all`: let the evaluations end (the cells in flight are cut short, what
        finished is written, each folder marked interrupted) while the window still pumps
        their records, so that no request of this app holds the engine when it is released."""
        evals = self.__dict__.get("evals")
        if evals is None:
            return
        deadline = time.monotonic() + timeout
        while any(not run.done() for run in evals.runs) and time.monotonic() < deadline:
            self.root.update()
            time.sleep(0.01)

    def quit(self, destroy_root: bool = True) -> None:
        """Save every open thread and the window state, stop runs, close the window. While a
        run or an evaluation goes, ask first (Escape or No keeps the window open)."""
        work = self.busy_work()
        if work and not self.dialogs.confirm_action(
                f"Closing stops {' and '.join(work)}. What finished is kept; an evaluation resumes "
                "from its results folder (Evaluations › Open Results…, Resume).", "Close LLM Space", "Stop and close"):
            return
        try:
            for ed in self._editors():
                ed.flush()
        except UserFacingError as exc:
            if not self.dialogs.confirm(f"{error_text(exc)}\n\nQuit anyway?", "Unsaved changes"):
                return
        for ed in self._editors():
            if ed.run.running:
                try:
                    ed.run.save_partial()
                except UserFacingError as exc:
                    log.warning("could not save a running thread on quit: %s", exc)
        if "evals" in self.__dict__:
            self.evals.stop_all()
            self._wait_for_evaluations()
        self.close(destroy_root)

    def close(self, destroy_root: bool = True) -> None:
        """Save the window state and tear down (tests keep the shared root alive)."""
        self.frame.close()
        self.tree_view.stop_polling()
        if "evals" in self.__dict__:  # running evaluations stop and write what finished
            self.evals.stop_all()
        self.pump.stop()
        if destroy_root:
            self.root.destroy()
            return
        for ed in self._editors():
            ed.run_controls.stop_run()
        self.root.configure(menu="")
        self.root.__dict__.pop("report_callback_exception", None)
        for child in list(self.root.winfo_children()):
            child.destroy()

    # -- after the window shows ------------------------------------------------------------
    def _prefetch_editor(self) -> None:
        from .editor import view  # noqa: F401  (first tab opens faster)

    def after_map(self) -> None:
        """Work deferred until the window shows: polling, background probes, mcp import."""
        self.tree_view.start_polling()
        self.drops.enable()  # ZIPs dropped anywhere install plugins
        self.tree_view.enable_file_drops()
        self.traces_panel.enable_file_drops()
        self.welcome.start_probe()
        self.root.after_idle(self._prefetch_editor)
        if os.environ.get("LLMSPACE_NO_MCP_PRELOAD") is None:
            def preload() -> None:
                try:
                    import mcp  # noqa: F401  (warm the import off the UI thread)
                except Exception:
                    pass
                try:  # which local model servers run (the model picker shows it)
                    self.app.models.refresh_local(timeout=0.5)
                except Exception:
                    log.debug("local model discovery failed", exc_info=True)

            self.pump.run_in_worker(preload, name="mcp-preload")
        self._load_plugin_code()

    def plugin_frontend(self) -> Any:
        """The desktop's answers to plugins' context calls (`ui/plugin_frontend.TkFrontend`)."""
        from .plugin_frontend import TkFrontend

        return TkFrontend(self.ui, self.open_settings, lambda: self.tree_view.refresh(True))

    def _load_plugin_code(self) -> None:
        """Load the code extensions of plugins whose metadata is not cached, off the UI thread."""
        def load() -> None:
            self.app.plugin_code.frontend = self.plugin_frontend()
            self.app.plugin_code.load()
            self.app.follow_dev_plugins()

        def done(future: Any) -> None:
            if future.exception() is not None:
                log.warning("could not load the plugins' code", exc_info=future.exception())

        self.pump.run_in_worker(load, done, name="plugin-code")
