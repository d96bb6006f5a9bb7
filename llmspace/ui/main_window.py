"""The main window: workspace tree on the left, thread tabs on the right (a welcome view
when none is open), a menu bar with Ctrl shortcuts (`ui/menus.py`), and a
status bar. Keeps window frame/maximised/zoom in `settings/window.json` and theme, open
tabs, active tab and expanded folders in `settings/ui-state.json`.

Editors are built lazily: a restored tab gets its editor when first selected, so start-up
cost does not grow with the number of open tabs. Caller: `ui/main.py`.

Composed of components that get what they use in their constructor: `self.tab_pages`
(`ui/tab_pages.TabPages`: tabs, pages, editors), `self.menus` (`ui/menus.Menus`: menu bar,
shortcuts, palette commands), `self.tree_view` and `self.welcome`. `open_thread`,
`active_editor`, `tabs`, `pages` and `editors` are kept here as the window's public face.
"""

from __future__ import annotations

import logging
import os
import tkinter as tk
from typing import Any

import ttkbootstrap as tb

from ..errors import UserFacingError, error_text
from ..presenters.state import ZOOM_STEP, StateStore, clamp_zoom
from ..presenters.tabs import TabsPresenter
from ..presenters.tree import TreePresenter
from . import theme as themes
from . import tkvars
from .dialogs import Dialogs
from .menus import Menus
from .panes import PaneKeeper
from .pump import Pump
from .status_bar import StatusBar
from .tab_pages import TabPages, thread_exists
from .tree_view import TreeView

log = logging.getLogger("llmspace.ui")
MIN_SIZE = (800, 500)


class MainWindow:
    """Owns the root window and every top-level view."""

    def __init__(self, app: Any, *, root: Any = None) -> None:
        self.app = app
        self.store = StateStore(app.root)
        self.win_state = self.store.load_window()
        self.ui_state = self.store.load_ui()
        if root is None:
            root = tb.Window(title="LLM Space", theme=themes.theme_name(self.ui_state.theme))
        else:
            root.style.theme_use(themes.theme_name(self.ui_state.theme))
        self.root = root
        self.root.title("LLM Space")
        self.root.minsize(*MIN_SIZE)  # every control stays reachable down to this size
        themes.style_sashes(root)
        self.dialogs = Dialogs(root, start_dir=lambda: app.workspace.root)  # pickers open in the workspace
        self.pump = Pump(root, executor=app.workers)
        self.pump.start()
        self._set_icon()
        self._clamp_to_screen()
        self.root.geometry(self.win_state.geometry())
        if self.win_state.maximized:
            self._set_maximized(True)
        if self.win_state.zoom != 1.0:
            themes.apply_zoom(root, self.win_state.zoom)
        self.react = tkvars.BooleanVar(root, self.ui_state.react)
        self.auto_run = tkvars.BooleanVar(root, self.ui_state.auto_run_tools or self.ui_state.react)
        self.theme_var = tkvars.StringVar(root, self.ui_state.theme)
        self.render_var = tkvars.StringVar(root, self.ui_state.rendering)
        self._build()
        self.menus = Menus(self, self.tree_view, self.tab_pages, app.registries.commands)
        themes.style_selection(root)
        themes.restyle_menus(root)  # menus follow the theme (and are readable) from the start
        if self.store.problems:  # an unreadable window.json / ui-state.json: say so, keep the file
            self.set_status(self.store.problems[0])
        self._save_job: str | None = None
        self._closed = False
        self.root.protocol("WM_DELETE_WINDOW", self.quit)
        self.root.report_callback_exception = self._on_tk_error
        self.root.bind("<Configure>", self._on_configure, add=True)

    def _clamp_to_screen(self) -> None:
        """A saved frame from a bigger or removed monitor must not put the window off-screen."""
        st = self.win_state
        sw, sh = self.root.winfo_screenwidth(), self.root.winfo_screenheight()
        # The menu bar sits above the client area on X11 (and a title bar with a window manager):
        # leave room for it, or a screen-high frame pushes the status bar off the bottom.
        sh -= self._menubar_allowance()
        st.width, st.height = min(st.width, max(400, sw)), min(st.height, max(300, sh))
        if not (-st.width + 100 < st.x < sw - 100):
            st.x = max(0, (sw - st.width) // 2)
        if not (0 <= st.y < sh - 100):
            st.y = max(0, (sh - st.height) // 2)
        # Keep the whole frame on the screen when it fits (the default 80,80 1280x800 frame
        # would otherwise hang off a 1280x800 screen).
        st.x = max(0, min(st.x, sw - st.width))
        st.y = max(0, min(st.y, sh - st.height))

    def _menubar_allowance(self) -> int:
        try:
            import tkinter.font as tkfont

            return int(tkfont.nametofont("TkMenuFont", root=self.root).metrics("linespace")) + 16
        except Exception:
            return 32

    # -- layout --------------------------------------------------------------------------
    def _build(self) -> None:
        root = self.root
        self.status = StatusBar(root)
        self.status.pack(side="bottom", fill="x")
        self.status_msg, self.status_right = self.status.msg, self.status.right
        from .toasts import Toasts

        self.toasts = Toasts(root)
        self.paned = tb.Panedwindow(root, orient="horizontal")
        self.paned.pack(fill="both", expand=True)
        ws = self.app.workspace
        try:
            ws.seed_examples()
        except Exception:
            log.exception("seeding the workspace failed")
        self.tree_p = TreePresenter(ws, self.ui_state.expanded)
        self.tree_view = TreeView(self.paned, self, self.tree_p)
        from .plugin_install import DropOverlay

        self.drops = DropOverlay(self, self.tree_view.import_files)  # enabled after the window maps
        self.paned.add(self.tree_view, weight=1)
        self.right = tb.Frame(self.paned)
        self.paned.add(self.right, weight=4)
        self.pane_keeper = PaneKeeper(self.paned, [0.2, 0.8], [160, 560])  # the tree keeps its share
        self.notebook = tb.Notebook(self.right)
        saved = TabsPresenter(self.ui_state.open_tabs, self.ui_state.active_tab)
        existing = [t for t in saved.tabs if thread_exists(ws, t)]
        self.tab_pages = TabPages(self, ws, self.notebook, TabsPresenter(existing, saved.active))
        from .welcome import WelcomeView

        self.welcome = WelcomeView(self.right, self)
        self.tree_p.refresh()
        self.tree_view.redraw()
        for rel in self.tabs.tabs:
            self.tab_pages.add_page(rel)
        self.show_right()
        if self.tabs.active:
            self.notebook.select(self.pages[self.tabs.active])
        self.sidebar_visible = True

    def _set_icon(self) -> None:
        try:
            from importlib.resources import files

            path = files("llmspace").joinpath("assets/icons/llmspace-256.png")
            if path.is_file():
                self._icon = tk.PhotoImage(master=self.root, file=str(path))
                self.root.iconphoto(True, self._icon)
        except Exception:
            log.debug("no window icon", exc_info=True)

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

    def open_thread(self, rel: str) -> Any:
        """Open (or focus) the tab of `rel`; returns its editor view (None while loading)."""
        return self.tab_pages.open_thread(rel)

    def active_editor(self) -> Any:
        return self.tab_pages.active_editor()

    def show_right(self) -> None:
        """The notebook when tabs are open, else the welcome view."""
        if self.tabs.tabs:
            self.welcome.pack_forget()
            self.notebook.pack(fill="both", expand=True)
        else:
            self.notebook.pack_forget()
            self.welcome.pack(fill="both", expand=True)
            self.welcome.refresh()

    # -- status --------------------------------------------------------------------------
    def set_status(self, text: str) -> None:
        self.status.set(text)

    def set_status_counts(self, threads: int) -> None:
        self.status_right.configure(text=f"{threads} thread{'s' if threads != 1 else ''} · {self.app.workspace.root}")

    def show_error(self, message: str) -> None:
        """An error in the status bar (its first line) and a dialog; known secrets removed."""
        message = error_text(message)
        self.status.error(message.splitlines()[0] if message else "Error")
        self.dialogs.error(message)

    def _on_tk_error(self, exc_type: Any, exc: BaseException, tb_: Any) -> None:
        """The one error boundary for UI callbacks: user-facing errors as they are, anything
        else logged with a pointer to the log (never a raw traceback on screen); both through
        `errors.error_text`, as the CLI's boundary, so known secrets never show."""
        text = error_text(exc, None if isinstance(exc, UserFacingError) else getattr(self.app, "log_file", None))
        self.status.error(text.splitlines()[0] if text else "Error")

    def report(self, exc: BaseException) -> None:
        self.show_error(error_text(exc, getattr(self.app, "log_file", None)))

    # -- commands ------------------------------------------------------------------------
    def new_from_example(self) -> Any:
        from .welcome import choose_example

        return choose_example(self)

    def reveal_workspace(self) -> None:
        self.tree_view.tree.selection_set(())
        self.tree_view.reveal()

    def open_palette(self) -> Any:
        from .palette import CommandPalette

        # every active palette command of the app's registry (built-in menu commands, plugin commands)
        items = [self._palette_item(r.value) for r in self.app.registries.commands.active()]
        return CommandPalette(self, [i for i in items if not i.label.endswith("Command Palette…")])

    def _palette_item(self, command: Any) -> Any:
        from ..plugins.code_calls import PluginCommand
        from .palette import PaletteItem

        if isinstance(command, PluginCommand):
            from .plugin_commands import run_plugin_command

            return PaletteItem(command.display_name, lambda args: run_plugin_command(self, command, args),
                               key=command.canonical_id, alias=command.alias, takes_arguments=True)
        return PaletteItem(command.display_name, lambda args: command.run(), getattr(command, "shortcut", ""))

    def open_settings(self) -> Any:
        from .settings_dialog import SettingsDialog

        dialog = SettingsDialog(self)
        dialog.bind("<Destroy>", lambda e: self.models_changed() if e.widget is dialog else None, add=True)
        return dialog

    def models_changed(self) -> None:
        """Providers, keys or the default model changed: every model row and the welcome
        view say again which model runs."""
        if self._closed:
            return
        for ed in self.editors.values():
            if ed is not None and ed.winfo_exists():
                ed.refresh_model()
        if self.welcome.winfo_ismapped():
            self.welcome.refresh()

    def import_from_storage(self) -> Any:
        from .storage_actions import import_from_storage

        return import_from_storage(self)

    def save_to_storage(self) -> Any:
        from .storage_actions import save_to_storage

        return save_to_storage(self)

    def open_link(self, url: str) -> None:
        """Import the thread an `llm-space://` link names (through its plugin storage) and open it."""
        from .storage_actions import open_link

        self.root.deiconify()
        self.root.lift()
        open_link(self, url)

    def install_plugins(self, paths: list[str] | None = None) -> bool:
        """File › Install plugin…: pick ZIPs (or install `paths`) off the UI thread."""
        from .plugin_install import install_zips

        return install_zips(self, paths)

    def show_welcome(self) -> None:
        from .welcome import WelcomeDialog

        WelcomeDialog(self)

    def about(self) -> None:
        from .. import __version__ as version

        self.dialogs.info(f"LLM Space for Python {version}\nData: {self.app.root.root}", "About LLM Space")

    def undo(self) -> None:
        ed = self.active_editor()
        if ed is not None:
            self.status.clear_error()
            ed.undo()

    def redo(self) -> None:
        ed = self.active_editor()
        if ed is not None:
            self.status.clear_error()
            ed.redo()

    def run_or_stop(self) -> None:
        ed = self.active_editor()
        if ed is not None:
            ed.run_controls.run_or_stop()

    def on_run_switch(self) -> None:
        if self.react.get():
            self.auto_run.set(True)
        self.state_changed()

    def toggle_sidebar(self) -> None:
        if self.sidebar_visible:
            self.paned.forget(self.tree_view)
        else:
            self.paned.insert(0, self.tree_view, weight=1)
            self.root.after_idle(self.pane_keeper.apply)
        self.sidebar_visible = not self.sidebar_visible

    def zoom(self, direction: int) -> None:
        z = 1.0 if direction == 0 else clamp_zoom(self.win_state.zoom + direction * ZOOM_STEP)
        self.win_state.zoom = z
        themes.apply_zoom(self.root, z)
        self.set_status(f"Zoom {round(z * 100)} %")
        self._schedule_save()

    def apply_theme(self) -> None:
        self.root.style.theme_use(themes.theme_name(self.theme_var.get()))
        themes.style_sashes(self.root)
        themes.style_selection(self.root)
        themes.restyle_menus(self.root)
        if self.win_state.zoom != 1.0:
            themes.fit_tree_rows(self.root)  # a theme switch resets the row height
        for ed in self.editors.values():
            if ed is not None:
                ed.theme_changed()
        self.state_changed()

    def apply_rendering(self) -> None:
        for ed in self.editors.values():
            if ed is not None:
                ed.set_rendering(self.render_var.get())
        self.state_changed()

    def toggle_fullscreen(self) -> None:
        self.win_state.fullscreen = not self.win_state.fullscreen
        self.root.attributes("-fullscreen", self.win_state.fullscreen)
        self._schedule_save()

    def _set_maximized(self, on: bool) -> None:
        try:
            if self.root.tk.call("tk", "windowingsystem") == "x11":
                self.root.attributes("-zoomed", on)
            else:
                self.root.state("zoomed" if on else "normal")
        except tk.TclError:
            pass

    def _is_maximized(self) -> bool:
        try:
            if self.root.tk.call("tk", "windowingsystem") == "x11":
                return bool(self.root.attributes("-zoomed"))
            return self.root.state() == "zoomed"
        except tk.TclError:
            return False

    # -- persistence ---------------------------------------------------------------------
    def _on_configure(self, e: Any) -> None:
        if e.widget is self.root and not self._closed:
            self._schedule_save()

    def _schedule_save(self) -> None:
        if self._save_job is not None:
            self.root.after_cancel(self._save_job)
        self._save_job = self.root.after(300, self.save_state)

    def state_changed(self) -> None:
        if not self._closed:
            self._schedule_save()

    def save_state(self) -> None:
        self._save_job = None
        st = self.win_state
        st.maximized = self._is_maximized()
        if not st.maximized and not st.fullscreen:
            st.width, st.height = self.root.winfo_width(), self.root.winfo_height()
            st.x, st.y = self.root.winfo_x(), self.root.winfo_y()
        u = self.ui_state
        u.theme = self.theme_var.get()
        u.open_tabs = list(self.tabs.tabs)
        u.active_tab = self.tabs.active
        u.expanded = sorted(self.tree_p.expanded)
        u.react = bool(self.react.get())
        u.auto_run_tools = bool(self.auto_run.get())
        u.rendering = self.render_var.get()
        try:
            if st.width > 1 and st.height > 1:
                self.store.save_window(st)
            self.store.save_ui(u)
        except (OSError, UserFacingError) as exc:  # a full or read-only disk must not block quitting
            log.warning("could not save window state: %s", exc)

    def flush_all(self) -> None:
        for ed in self.editors.values():
            if ed is not None:
                ed.flush()

    def quit(self) -> None:
        """Save every open thread and the window state, stop runs, close the window."""
        try:
            self.flush_all()
        except UserFacingError as exc:
            if not self.dialogs.confirm(f"{error_text(exc)}\n\nQuit anyway?", "Unsaved changes"):
                return
        for ed in self.editors.values():
            if ed is not None and ed.run.running:
                try:
                    ed.run.save_partial()
                except UserFacingError as exc:
                    log.warning("could not save a running thread on quit: %s", exc)
        self.close()

    def close(self, destroy_root: bool = True) -> None:
        """Save the window state and tear down (tests keep the shared root alive)."""
        self._closed = True
        if self._save_job is not None:
            self.root.after_cancel(self._save_job)
            self._save_job = None
        self.save_state()
        if self.tree_view._poll_job:
            self.tree_view.after_cancel(self.tree_view._poll_job)
            self.tree_view._poll_job = None
        self.pump.stop()
        if destroy_root:
            self.root.destroy()
            return
        for ed in list(self.editors.values()):
            if ed is not None:
                ed.run_controls.stop_run()
        self.root.configure(menu="")
        self.root.__dict__.pop("report_callback_exception", None)
        for child in list(self.root.winfo_children()):
            child.destroy()

    def _prefetch_editor(self) -> None:
        from .editor import view  # noqa: F401  (first tab opens faster)

    def after_map(self) -> None:
        """Work deferred until the window shows: polling, background probes, mcp import."""
        self.tree_view.start_polling()
        self.drops.enable()  # ZIPs dropped anywhere install plugins
        self.tree_view.enable_file_drops()
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

    def _load_plugin_code(self) -> None:
        """Load the code extensions of plugins whose metadata is not cached, off the UI thread."""
        from .plugin_frontend import TkFrontend

        def load() -> None:
            self.app.plugin_code.frontend = TkFrontend(self)
            self.app.plugin_code.load()

        def done(future: Any) -> None:
            if future.exception() is not None:
                log.warning("could not load the plugins' code", exc_info=future.exception())

        self.pump.run_in_worker(load, done, name="plugin-code")
