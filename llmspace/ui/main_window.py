"""The main window: workspace tree on the left, thread tabs on the right (a welcome view
when none is open), a menu bar with the reference's commands and Ctrl shortcuts, and a
status bar. Keeps window frame/maximised/zoom in `settings/window.json` and theme, open
tabs, active tab and expanded folders in `settings/ui-state.json`.

Editors are built lazily: a restored tab gets its editor when first selected, so start-up
cost does not grow with the number of open tabs. Caller: `ui/main.py`.
"""

from __future__ import annotations

import logging
import os
import threading
import tkinter as tk
import webbrowser
from typing import Any

import ttkbootstrap as tb

from . import tkvars

from ..errors import UserFacingError, describe_exception
from ..presenters.state import StateStore, clamp_zoom, ZOOM_STEP
from ..presenters.tabs import TabsPresenter
from ..presenters.tree import TreePresenter
from . import theme as themes
from .dialogs import Dialogs
from .pump import Pump
from .tree_view import TreeView

log = logging.getLogger("llmspace.ui")
LARGE_FILE = 1_000_000  # bytes; larger threads load in a worker thread
DOCS_URL = "https://deer-flow.github.io/llm-space/"
REPO_URL = "https://github.com/deer-flow/llm-space"


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
        self.dialogs = Dialogs(root)
        self.pump = Pump(root)
        self.pump.start()
        self._set_icon()
        self.root.geometry(self.win_state.geometry())
        if self.win_state.maximized:
            self._set_maximized(True)
        if self.win_state.zoom != 1.0:
            themes.apply_zoom(root, self.win_state.zoom)
        self.react = tkvars.BooleanVar(root, self.ui_state.react)
        self.auto_run = tkvars.BooleanVar(root, self.ui_state.auto_run_tools or self.ui_state.react)
        self.theme_var = tkvars.StringVar(root, self.ui_state.theme)
        self.render_var = tkvars.StringVar(root, self.ui_state.rendering)
        self.tabs = TabsPresenter(self.ui_state.open_tabs, self.ui_state.active_tab)
        self.pages: dict[str, tb.Frame] = {}
        self.editors: dict[str, Any] = {}
        self._loading: set[str] = set()
        self._build()
        self._build_menu()
        self._bind_keys()
        self._save_job: str | None = None
        self._closed = False
        self.root.protocol("WM_DELETE_WINDOW", self.quit)
        self.root.bind("<Configure>", self._on_configure, add=True)

    # -- layout --------------------------------------------------------------------------
    def _build(self) -> None:
        root = self.root
        self.status = tb.Frame(root, padding=(8, 2))
        self.status.pack(side="bottom", fill="x")
        self.status_msg = tb.Label(self.status, text="Ready")
        self.status_msg.pack(side="left")
        self.status_right = tb.Label(self.status, text="", bootstyle="secondary")
        self.status_right.pack(side="right")
        self.paned = tb.Panedwindow(root, orient="horizontal")
        self.paned.pack(fill="both", expand=True)
        ws = self.app.workspace
        try:
            ws.seed_examples()
        except Exception:
            log.exception("seeding the workspace failed")
        self.tree_p = TreePresenter(ws, self.ui_state.expanded)
        self.tree_view = TreeView(self.paned, self, self.tree_p)
        self.paned.add(self.tree_view, weight=1)
        self.right = tb.Frame(self.paned)
        self.paned.add(self.right, weight=4)
        self.notebook = tb.Notebook(self.right)
        self.notebook.bind("<<NotebookTabChanged>>", self._on_tab_changed)
        self.notebook.bind("<Button-2>", self._on_middle_click)
        from .welcome import WelcomeView

        self.welcome = WelcomeView(self.right, self)
        self.tree_p.refresh()
        self.tree_view.redraw()
        existing = [t for t in self.tabs.tabs if self._thread_exists(t)]
        self.tabs = TabsPresenter(existing, self.tabs.active)
        for rel in self.tabs.tabs:
            self._add_page(rel)
        self._show_right()
        if self.tabs.active:
            self.notebook.select(self.pages[self.tabs.active])
        self.sidebar_visible = True

    def _thread_exists(self, rel: str) -> bool:
        try:
            return self.app.workspace.resolve(rel).is_file()
        except UserFacingError:
            return False

    def _set_icon(self) -> None:
        try:
            from importlib.resources import files

            path = files("llmspace").joinpath("assets/icons/llmspace-256.png")
            if path.is_file():
                self._icon = tk.PhotoImage(master=self.root, file=str(path))
                self.root.iconphoto(True, self._icon)
        except Exception:
            log.debug("no window icon", exc_info=True)

    def _show_right(self) -> None:
        if self.tabs.tabs:
            self.welcome.pack_forget()
            self.notebook.pack(fill="both", expand=True)
        else:
            self.notebook.pack_forget()
            self.welcome.pack(fill="both", expand=True)
            self.welcome.refresh()

    # -- menu and keys -------------------------------------------------------------------
    def _build_menu(self) -> None:
        m = tk.Menu(self.root)
        self.menubar = m
        self.commands: list[tuple[str, Any]] = []

        def sub(label: str, items: list[Any]) -> tk.Menu:
            menu = tk.Menu(m, tearoff=False)
            for it in items:
                if it is None:
                    menu.add_separator()
                elif it[0] == "check":
                    menu.add_checkbutton(label=it[1], variable=it[2], command=it[3])
                elif it[0] == "radio":
                    menu.add_radiobutton(label=it[1], variable=it[2], value=it[3], command=it[4])
                else:
                    label2, cmd, accel = it
                    menu.add_command(label=label2, command=cmd, accelerator=accel or "")
                    self.commands.append((f"{label}: {label2}", cmd))
            m.add_cascade(label=label, menu=menu)
            return menu

        self.file_menu = sub("File", [
            ("New File", self.tree_view.new_file, "Ctrl+N"),
            ("New from Examples…", self.new_from_example, None),
            ("New Folder", self.tree_view.new_folder, "Ctrl+Shift+N"), None,
            ("Import from Files…", self.tree_view.import_files, None),
            ("Import from Clipboard", self.tree_view.import_clipboard, None), None,
            ("Refresh Workspace", self.tree_view.refresh, None),
            ("Reveal Workspace Folder", self.reveal_workspace, None), None,
            ("Close Tab", self.close_active, "Ctrl+W"),
            ("Close Others", self.close_others, None),
            ("Close All Tabs", self.close_all, None),
            ("Reopen Closed Tab", self.reopen_closed, "Ctrl+Shift+T"), None,
            ("Settings…", self.open_settings, "Ctrl+,"),
            ("Quit", self.quit, "Ctrl+Q"),
        ])
        self.edit_menu = sub("Edit", [
            ("Undo", self.undo, "Ctrl+Z"), ("Redo", self.redo, "Ctrl+Shift+Z"), None,
            ("Cut", lambda: self._focus_event("<<Cut>>"), "Ctrl+X"),
            ("Copy", lambda: self._focus_event("<<Copy>>"), "Ctrl+C"),
            ("Paste", lambda: self._focus_event("<<Paste>>"), "Ctrl+V"),
            ("Select All", lambda: self._focus_event("<<SelectAll>>"), "Ctrl+A"),
        ])
        self.view_menu = sub("View", [
            ("Command Palette…", self.open_palette, "Ctrl+Shift+P"),
            ("Toggle Sidebar", self.toggle_sidebar, "Ctrl+B"), None,
            ("Zoom In", lambda: self.zoom(+1), "Ctrl++"), ("Zoom Out", lambda: self.zoom(-1), "Ctrl+-"),
            ("Reset Zoom", lambda: self.zoom(0), "Ctrl+0"), None,
            ("radio", "Light Theme", self.theme_var, "light", self.apply_theme),
            ("radio", "Dark Theme", self.theme_var, "dark", self.apply_theme),
            ("radio", "System Theme", self.theme_var, "system", self.apply_theme), None,
            ("radio", "Full Rendering", self.render_var, "rich", self.apply_rendering),
            ("radio", "Fast Rendering (plain text)", self.render_var, "lite", self.apply_rendering),
        ])
        self.run_menu = sub("Run", [
            ("Run / Stop", self.run_or_stop, "Ctrl+Enter"), None,
            ("check", "Enable ReAct loop", self.react, self._on_run_switch),
            ("check", "Auto run tools", self.auto_run, self._on_run_switch),
        ])
        self.window_menu = sub("Window", [
            ("Minimize", self.root.iconify, None),
            ("Select Previous Tab", lambda: self.step_tab(-1), "Ctrl+Alt+Left"),
            ("Select Next Tab", lambda: self.step_tab(+1), "Ctrl+Alt+Right"),
            ("Toggle Full Screen", self.toggle_fullscreen, "Ctrl+Shift+F"),
        ])
        self.help_menu = sub("Help", [
            ("View Documentation", lambda: webbrowser.open(DOCS_URL), None),
            ("GitHub Project", lambda: webbrowser.open(REPO_URL), None),
            ("Report Bug", lambda: webbrowser.open(REPO_URL + "/issues"), None), None,
            ("Welcome", self.show_welcome, None),
            ("About LLM Space", self.about, None),
        ])
        self.root.configure(menu=m)

    def _bind_keys(self) -> None:
        r = self.root
        keys = {
            "<Control-n>": self.tree_view.new_file, "<Control-N>": self.tree_view.new_folder,
            "<Control-w>": self.close_active, "<Control-T>": self.reopen_closed,
            "<Control-comma>": self.open_settings, "<Control-q>": self.quit,
            "<Control-b>": self.toggle_sidebar, "<Control-plus>": lambda: self.zoom(+1),
            "<Control-equal>": lambda: self.zoom(+1), "<Control-minus>": lambda: self.zoom(-1),
            "<Control-0>": lambda: self.zoom(0), "<Control-Return>": self.run_or_stop,
            "<Control-Alt-Left>": lambda: self.step_tab(-1), "<Control-Alt-Right>": lambda: self.step_tab(+1),
            "<Control-Tab>": lambda: self.step_tab(+1), "<Control-ISO_Left_Tab>": lambda: self.step_tab(-1),
            "<Control-F>": self.toggle_fullscreen, "<Control-Z>": self.redo, "<Control-y>": self.redo,
            "<Control-z>": self.undo, "<Control-P>": self.open_palette,
        }
        for seq, fn in keys.items():
            r.bind_all(seq, lambda e, f=fn: (f(), "break")[1])

    def _focus_event(self, name: str) -> None:
        w = self.root.focus_get()
        if w is not None:
            w.event_generate(name)

    # -- status --------------------------------------------------------------------------
    def set_status(self, text: str) -> None:
        self.status_msg.configure(text=text)

    def set_status_counts(self, threads: int) -> None:
        self.status_right.configure(text=f"{threads} thread{'s' if threads != 1 else ''} · {self.app.workspace.root}")

    def show_error(self, message: str) -> None:
        self.set_status(message.splitlines()[0] if message else "Error")
        self.dialogs.error(message)

    def report(self, exc: BaseException) -> None:
        self.show_error(describe_exception(exc, getattr(self.app, "log_file", None)))

    # -- tabs ----------------------------------------------------------------------------
    def _add_page(self, rel: str) -> tb.Frame:
        page = tb.Frame(self.notebook)
        page.rel = rel  # type: ignore[attr-defined]
        self.pages[rel] = page
        idx = self.tabs.tabs.index(rel)
        if idx >= len(self.notebook.tabs()):
            self.notebook.add(page, text=self._tab_text(rel))
        else:
            self.notebook.insert(idx, page, text=self._tab_text(rel))
        return page

    @staticmethod
    def _tab_text(rel: str) -> str:
        name = rel.rpartition("/")[2]
        return (name[:-5] if name.endswith(".json") else name) + "  "

    def open_thread(self, rel: str) -> Any:
        """Open (or focus) the tab of `rel`; returns its editor view."""
        added = self.tabs.open(rel)
        if added:
            self._add_page(rel)
        self._show_right()
        self.notebook.select(self.pages[rel])
        self.tree_view.select(rel)
        self.state_changed()
        return self._ensure_editor(rel)

    def _ensure_editor(self, rel: str) -> Any:
        """The editor of an open tab, built on first use. Large files are read and validated
        in a worker thread (a "Loading…" label shows meanwhile) so the window never stalls;
        then this returns None and the editor appears when the pump delivers the thread."""
        if rel in self.editors or rel in self._loading:
            return self.editors.get(rel)
        page = self.pages.get(rel)
        if page is None:
            return None
        try:
            size = self.app.workspace.resolve(rel).stat().st_size
        except (OSError, UserFacingError):
            size = 0
        if size <= LARGE_FILE:
            return self._build_editor(rel, None)
        self._loading.add(rel)
        lbl = tb.Label(page, text=f"Loading {rel} ({size / 1e6:.1f} MB)…", bootstyle="secondary", padding=20)
        lbl.pack(fill="both", expand=True)
        page.loading_label = lbl  # type: ignore[attr-defined]
        ws = self.app.workspace

        def work() -> None:
            try:
                thread = ws.open(rel)
            except Exception as exc:  # reported on the UI thread
                self.pump.post(self._load_failed, rel, exc)
                return
            self.pump.post(self._build_editor, rel, thread)

        threading.Thread(target=work, name="thread-loader", daemon=True).start()
        return None

    def _build_editor(self, rel: str, thread: Any) -> Any:
        self._loading.discard(rel)
        page = self.pages.get(rel)
        if page is None or rel in self.editors:
            return self.editors.get(rel)
        lbl = getattr(page, "loading_label", None)
        if lbl is not None:
            lbl.destroy()
            page.loading_label = None  # type: ignore[attr-defined]
        from .editor.view import EditorView

        try:
            ed = EditorView(page, self, rel, thread=thread)
        except UserFacingError as exc:
            self._load_failed(rel, exc)
            return None
        ed.pack(fill="both", expand=True)
        self.editors[rel] = ed
        return ed

    def _load_failed(self, rel: str, exc: BaseException) -> None:
        self._loading.discard(rel)
        page = self.pages.get(rel)
        if page is None:
            return
        lbl = getattr(page, "loading_label", None)
        if lbl is not None:
            lbl.destroy()
        text = str(exc) if isinstance(exc, UserFacingError) else describe_exception(exc)
        tb.Label(page, text=text, bootstyle="danger", wraplength=600, padding=20).pack(fill="both", expand=True)
        self.editors[rel] = None

    def active_editor(self) -> Any:
        return self.editors.get(self.tabs.active) if self.tabs.active else None

    def _on_tab_changed(self, _e: Any = None) -> None:
        try:
            cur = self.notebook.select()
        except tk.TclError:
            return
        if not cur:
            return
        page = self.notebook.nametowidget(cur)
        rel = getattr(page, "rel", None)
        if rel:
            self.tabs.activate(rel)
            self._ensure_editor(rel)
            self.tree_view.select(rel)
            self.state_changed()

    def _on_middle_click(self, e: Any) -> None:
        try:
            idx = self.notebook.index(f"@{e.x},{e.y}")
        except tk.TclError:
            return
        self.close_tab(self.tabs.tabs[idx])

    def close_tab(self, rel: str, *, remember: bool = True) -> None:
        ed = self.editors.pop(rel, None)
        if ed is not None:
            ed.close()
        page = self.pages.pop(rel, None)
        if remember:
            self.tabs.close(rel)
        else:
            self.tabs.removed(rel)
        if page is not None:
            self.notebook.forget(page)
            page.destroy()
        try:
            self.app.workspace.forget(rel)
        except Exception:
            pass
        self._show_right()
        if self.tabs.active in self.pages:
            self.notebook.select(self.pages[self.tabs.active])
        self.state_changed()

    def close_active(self) -> None:
        if self.tabs.active:
            self.close_tab(self.tabs.active)

    def close_others(self) -> None:
        keep = self.tabs.active
        for rel in [t for t in self.tabs.tabs if t != keep]:
            self._close_pages([rel])
        if keep:
            self.tabs.close_others(keep)
        self._show_right()
        self.state_changed()

    def close_all(self) -> None:
        self._close_pages(list(self.tabs.tabs))
        self.tabs.close_all()
        self._show_right()
        self.state_changed()

    def _close_pages(self, rels: list[str]) -> None:
        for rel in rels:
            ed = self.editors.pop(rel, None)
            if ed is not None:
                ed.close()
            page = self.pages.pop(rel, None)
            if page is not None:
                self.notebook.forget(page)
                page.destroy()

    def reopen_closed(self) -> None:
        before = set(self.tabs.tabs)
        group = self.tabs.reopen()
        for rel in group:
            if rel not in before and self._thread_exists(rel):
                self._add_page(rel)
            elif rel not in before:
                self.tabs.tabs.remove(rel)
        if self.tabs.active in self.pages:
            self._show_right()
            self.notebook.select(self.pages[self.tabs.active])
        self.state_changed()

    def step_tab(self, delta: int) -> None:
        rel = self.tabs.step(delta)
        if rel:
            self.notebook.select(self.pages[rel])

    # -- tree callbacks ------------------------------------------------------------------
    def rename_entry(self, rel: str, name: str) -> str:
        ed = self.editors.get(rel)
        if ed is not None:
            ed.flush()
        new_rel = self.tree_p.rename(rel, name)
        self._retarget(rel, new_rel)
        return new_rel

    def before_move(self, rel: str) -> None:
        for t, ed in list(self.editors.items()):
            if ed is not None and (t == rel or t.startswith(rel + "/")):
                ed.flush()

    def after_move(self, old: str, new: str) -> None:
        self._retarget(old, new)

    def _retarget(self, old: str, new: str) -> None:
        if old == new:
            return
        mapping = {}
        for t in list(self.pages):
            if t == old or t.startswith(old + "/"):
                mapping[t] = new + t[len(old):]
        self.tabs.renamed(old, new)
        for t, n in mapping.items():
            page = self.pages.pop(t)
            page.rel = n  # type: ignore[attr-defined]
            self.pages[n] = page
            self.notebook.tab(page, text=self._tab_text(n))
            if t in self.editors:
                ed = self.editors.pop(t)
                self.editors[n] = ed
                if ed is not None:
                    ed.moved(n)
        self.state_changed()

    def before_remove(self, rel: str) -> None:
        for t in list(self.pages):
            if t == rel or t.startswith(rel + "/"):
                ed = self.editors.pop(t, None)
                if ed is not None:
                    ed.close(save=False)

    def after_remove(self, rel: str) -> None:
        for t in list(self.pages):
            if t == rel or t.startswith(rel + "/"):
                self.close_tab(t, remember=False)

    def check_open_files(self) -> None:
        """Reload open, unedited threads that another program changed; close vanished ones."""
        for rel, ed in list(self.editors.items()):
            if ed is not None:
                ed.check_external_change()

    # -- commands ------------------------------------------------------------------------
    def new_from_example(self) -> None:
        from .welcome import choose_example

        choose_example(self)

    def reveal_workspace(self) -> None:
        self.tree_view.tree.selection_set(())
        self.tree_view.reveal()

    def open_palette(self) -> Any:
        from .palette import CommandPalette

        return CommandPalette(self, [c for c in self.commands if not c[0].endswith("Command Palette…")])

    def open_settings(self) -> None:
        from .settings_dialog import SettingsDialog

        SettingsDialog(self)

    def show_welcome(self) -> None:
        from .welcome import WelcomeDialog

        WelcomeDialog(self)

    def about(self) -> None:
        from .. import __version__ as version

        self.dialogs.info(f"LLM Space for Python {version}\nData: {self.app.root.root}", "About LLM Space")

    def undo(self) -> None:
        ed = self.active_editor()
        if ed is not None:
            ed.undo()

    def redo(self) -> None:
        ed = self.active_editor()
        if ed is not None:
            ed.redo()

    def run_or_stop(self) -> None:
        ed = self.active_editor()
        if ed is not None:
            ed.run_or_stop()

    def _on_run_switch(self) -> None:
        if self.react.get():
            self.auto_run.set(True)
        self.state_changed()

    def toggle_sidebar(self) -> None:
        if self.sidebar_visible:
            self.paned.forget(self.tree_view)
        else:
            self.paned.insert(0, self.tree_view, weight=1)
        self.sidebar_visible = not self.sidebar_visible

    def zoom(self, direction: int) -> None:
        z = 1.0 if direction == 0 else clamp_zoom(self.win_state.zoom + direction * ZOOM_STEP)
        self.win_state.zoom = z
        themes.apply_zoom(self.root, z)
        self.set_status(f"Zoom {round(z * 100)} %")
        self._schedule_save()

    def apply_theme(self) -> None:
        self.root.style.theme_use(themes.theme_name(self.theme_var.get()))
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
        except OSError as exc:
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
            if not self.dialogs.confirm(f"{exc}\n\nQuit anyway?", "Unsaved changes"):
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
                ed.stop_run()
        self.root.configure(menu="")
        for child in list(self.root.winfo_children()):
            child.destroy()

    def _prefetch_editor(self) -> None:
        from .editor import view  # noqa: F401  (first tab opens faster)

    def after_map(self) -> None:
        """Work deferred until the window shows: polling, background probes, mcp import."""
        self.tree_view.start_polling()
        self.welcome.start_probe()
        self.root.after_idle(self._prefetch_editor)
        if os.environ.get("LLMSPACE_NO_MCP_PRELOAD") is None:
            import threading

            def preload() -> None:
                try:
                    import mcp  # noqa: F401  (warm the import off the UI thread)
                except Exception:
                    pass
                try:  # which local model servers run (the model picker shows it)
                    self.app.models.refresh_local(timeout=0.5)
                except Exception:
                    log.debug("local model discovery failed", exc_info=True)

            threading.Thread(target=preload, name="mcp-preload", daemon=True).start()
