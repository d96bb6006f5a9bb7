"""The menu bar (File, Edit, View, Run, Evaluations, Window and Help menus, with Ctrl shortcuts) and the
window-wide key bindings of the main window; every command is also listed for the command
palette (`Menus.commands`).

`Menus(window, tree_view, tab_pages, appearance, switches, frame, commands)` is a component
of `ui/main_window.MainWindow` (`window.menus`): the window's own commands are seen through
`MenuHost`, the file commands are `ui/tree_view.TreeView`'s, the tab and editor commands
`ui/tab_pages.TabPages`'s, theme, rendering and zoom `ui/appearance.Appearance`'s, the run
switches `ui/services.RunSwitches` and full screen `ui/window_frame.WindowFrame`'s.
"""

from __future__ import annotations

import tkinter as tk
import webbrowser
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from ..registries import BuiltinCommand, PaletteCommand
from ..registry import BUILTIN, Registry
from .check_marks import add_check

if TYPE_CHECKING:
    from .appearance import Appearance
    from .services import RunSwitches
    from .share_actions import ShareActions
    from .tab_pages import TabPages
    from .tree_view import TreeView
    from .welcome import ThreadStarter
    from .window_frame import WindowFrame

DOCS_URL = "https://deer-flow.github.io/llm-space/"
REPO_URL = "https://github.com/deer-flow/llm-space"


class MenuHost(Protocol):
    """What `Menus` uses of the main window."""

    root: Any  # the ttkbootstrap Window
    starter: ThreadStarter  # File › New from Examples…

    def reveal_workspace(self) -> None: ...
    def open_settings(self) -> Any: ...
    def install_plugins(self, paths: list[str] | None = None) -> bool: ...
    def import_from_storage(self) -> Any: ...
    def save_to_storage(self) -> Any: ...
    @property
    def share_actions(self) -> ShareActions: ...
    def quit(self) -> None: ...
    def open_palette(self) -> Any: ...
    def toggle_sidebar(self) -> None: ...
    def show_welcome(self) -> None: ...
    def about(self) -> None: ...
    def new_evaluation(self) -> Any: ...
    def open_results(self) -> Any: ...
    def open_eval_file(self) -> Any: ...
    def compare_results(self) -> Any: ...
    def optimize_prompt(self) -> Any: ...


class Menus:
    """Builds the menu bar and binds the shortcuts on construction."""

    def __init__(self, window: MenuHost, tree_view: TreeView, tab_pages: TabPages, appearance: Appearance,
                 switches: RunSwitches, frame: WindowFrame, commands: Registry[PaletteCommand] | None = None) -> None:
        self.window = window
        self.registry = commands  # the app's palette-command registry (built-ins registered here)
        self.root = window.root
        self.tree_view = tree_view
        self.tab_pages = tab_pages
        self.look, self.switches, self.frame = appearance, switches, frame
        self.commands: list[tuple[str, Callable[[], Any]]] = []
        self._build_menu()
        self._bind_keys()

    def _build_menu(self) -> None:
        m = tk.Menu(self.root)
        self.menubar = m

        def sub(label: str, items: list[Any]) -> tk.Menu:
            menu = tk.Menu(m, tearoff=False)
            for it in items:
                if it is None:
                    menu.add_separator()
                elif it[0] == "check":
                    add_check(menu, it[1], it[2], it[3])  # a box when off too
                    register(label, it[1], partial(_toggle, it[2], it[3]), None)
                elif it[0] == "radio":
                    accel = it[5] if len(it) > 5 else None
                    menu.add_radiobutton(label=it[1], variable=it[2], value=it[3], command=it[4], accelerator=accel or "")
                    register(label, it[1], partial(_choose, it[2], it[3], it[4]), accel)
                else:
                    label2, cmd, accel = it
                    menu.add_command(label=label2, command=cmd, accelerator=accel or "")
                    register(label, label2, cmd, accel)
            m.add_cascade(label=label, menu=menu)
            return menu

        def register(menu_label: str, label: str, cmd: Callable[[], Any], accel: str | None) -> None:
            """Every menu entry is a palette command too (radio and check entries set their choice)."""
            self.commands.append((f"{menu_label}: {label}", cmd))
            if self.registry is not None:
                self.registry.register(f"builtin:command:{menu_label}/{label}",
                                       BuiltinCommand(f"{menu_label}: {label}", cmd, accel or ""), source=BUILTIN)

        self.file_menu = sub("File", [
            ("New File", self.tree_view.new_file, "Ctrl+N"),
            ("New from Examples…", self.window.starter.example, None),
            ("New Folder", self.tree_view.new_folder, "Ctrl+Shift+N"), None,
            ("Import from Files…", self.tree_view.import_files, None),
            ("Import from Clipboard", self.tree_view.import_clipboard, None),
            ("Import from Storage…", self.window.import_from_storage, None),
            ("Save to Storage…", self.window.save_to_storage, None), None,
            ("Share…", lambda: self.window.share_actions.share(), None),
            ("Open Shared Link…", lambda: self.window.share_actions.open_shared_link(), None),
            ("Sign in with GitHub…", lambda: self.window.share_actions.sign_in(), None),
            ("Sign out of GitHub", lambda: self.window.share_actions.sign_out(), None), None,
            ("Install Plugin…", self.window.install_plugins, None), None,
            ("Refresh Workspace", self.tree_view.refresh, None),
            ("Reveal Workspace Folder", self.window.reveal_workspace, None), None,
            ("Close Tab", self.tab_pages.close_active, "Ctrl+W"),
            ("Close Others", self.tab_pages.close_others, None),
            ("Close All Tabs", self.tab_pages.close_all, None),
            ("Reopen Closed Tab", self.tab_pages.reopen_closed, "Ctrl+Shift+T"), None,
            ("Settings…", self.window.open_settings, "Ctrl+,"),
            ("Quit", self.window.quit, "Ctrl+Q"),
        ])
        self.edit_menu = sub("Edit", [
            ("Undo", self.tab_pages.undo, "Ctrl+Z"), ("Redo", self.tab_pages.redo, "Ctrl+Shift+Z"), None,
            ("Insert MCP Prompt…", self.insert_mcp_prompt, None), None,
            ("Cut", lambda: self._focus_event("<<Cut>>"), "Ctrl+X"),
            ("Copy", lambda: self._focus_event("<<Copy>>"), "Ctrl+C"),
            ("Paste", lambda: self._focus_event("<<Paste>>"), "Ctrl+V"),
            ("Select All", lambda: self._focus_event("<<SelectAll>>"), "Ctrl+A"),
        ])
        self.view_menu = sub("View", [
            ("Command Palette…", self.window.open_palette, "Ctrl+Shift+P"),
            ("Toggle Sidebar", self.window.toggle_sidebar, "Ctrl+B"),
            ("Toggle Run History", self.toggle_history, "Ctrl+Shift+H"), None,
            ("Zoom In", lambda: self.look.zoom(+1), "Ctrl++"), ("Zoom Out", lambda: self.look.zoom(-1), "Ctrl+-"),
            ("Reset Zoom", lambda: self.look.zoom(0), "Ctrl+0"), None,
            ("radio", "Light Theme", self.look.theme_var, "light", self.look.apply_theme, "Ctrl+Shift+L"),
            ("radio", "Dark Theme", self.look.theme_var, "dark", self.look.apply_theme, "Ctrl+Shift+D"),
            ("radio", "System Theme", self.look.theme_var, "system", self.look.apply_theme, "Ctrl+Shift+S"), None,
            ("radio", "Full Rendering", self.look.render_var, "rich", self.look.apply_rendering),
            ("radio", "Fast Rendering (plain text)", self.look.render_var, "lite", self.look.apply_rendering),
            ("check", "Render Markdown", self.look.markdown_var, self.look.apply_markdown),
        ])
        self.run_menu = sub("Run", [
            ("Run / Stop", self.tab_pages.run_or_stop, "Ctrl+Enter"),
            ("Regenerate", self.tab_pages.regenerate, "Ctrl+R"), None,
            ("check", "Enable ReAct loop", self.switches.react, self.switches.changed),
            ("check", "Auto run tools", self.switches.auto_run, self.switches.changed),
        ])
        self.evals_menu = sub("Evaluations", [
            ("New Evaluation…", self.window.new_evaluation, None),
            ("Open Results…", self.window.open_results, None),
            ("Open Evaluation File…", self.window.open_eval_file, None),
            ("Compare Two Results…", self.window.compare_results, None),
            ("Optimize Prompt…", self.window.optimize_prompt, None),
        ])
        self.window_menu = sub("Window", [
            ("Minimize", self.root.iconify, None),
            ("Select Previous Tab", lambda: self.tab_pages.step_tab(-1), "Ctrl+Alt+Left"),
            ("Select Next Tab", lambda: self.tab_pages.step_tab(+1), "Ctrl+Alt+Right"),
            ("Toggle Full Screen", self.frame.toggle_fullscreen, "Ctrl+Shift+F"),
        ])
        self.help_menu = sub("Help", [
            ("View Documentation", lambda: webbrowser.open(DOCS_URL), None),
            ("GitHub Project", lambda: webbrowser.open(REPO_URL), None),
            ("Report Bug", lambda: webbrowser.open(REPO_URL + "/issues"), None), None,
            ("Welcome", self.window.show_welcome, None),
            ("About LLM Space", self.window.about, None),
        ])
        self.root.configure(menu=m)

    def _bind_keys(self) -> None:
        r = self.root
        keys = {
            "<Control-n>": self.tree_view.new_file, "<Control-N>": self.tree_view.new_folder,
            "<Control-w>": self.tab_pages.close_active, "<Control-T>": self.tab_pages.reopen_closed,
            "<Control-comma>": self.window.open_settings, "<Control-q>": self.window.quit,
            "<Control-b>": self.window.toggle_sidebar, "<Control-plus>": lambda: self.look.zoom(+1),
            "<Control-equal>": lambda: self.look.zoom(+1), "<Control-minus>": lambda: self.look.zoom(-1),
            "<Control-0>": lambda: self.look.zoom(0), "<Control-Return>": self.tab_pages.run_or_stop,
            "<Control-r>": self.tab_pages.regenerate,
            "<Control-Alt-Left>": lambda: self.tab_pages.step_tab(-1), "<Control-Alt-Right>": lambda: self.tab_pages.step_tab(+1),
            "<Control-L>": partial(_choose, self.look.theme_var, "light", self.look.apply_theme),
            "<Control-D>": partial(_choose, self.look.theme_var, "dark", self.look.apply_theme),
            "<Control-S>": partial(_choose, self.look.theme_var, "system", self.look.apply_theme),
            "<Control-F>": self.frame.toggle_fullscreen, "<Control-Z>": self.tab_pages.redo, "<Control-y>": self.tab_pages.redo,
            "<Control-z>": self.tab_pages.undo, "<Control-P>": self.window.open_palette,
            "<Control-H>": self.toggle_history,
        }
        mac = r.tk.call("tk", "windowingsystem") == "aqua"
        for seq, fn in keys.items():
            if mac:  # Cmd on macOS, as the original's ⌘ shortcuts
                seq = seq.replace("Control-", "Command-").replace("Alt-", "Option-")
            r.bind_all(seq, lambda e, f=fn: (f(), "break")[1])
        # Ctrl+Tab / Ctrl+Shift+Tab switch tabs wherever the focus is. Bound on the window, not
        # on "all": there Tk's focus traversal (<<NextWindow>>, <Tab>) wins. Text's own Ctrl+Tab
        # (move the focus) becomes a no-op that lets the event go on to the window (deleting it
        # would let Text's <Tab> insert a tab instead).
        for seq in ("<Control-Tab>", "<Control-Shift-Tab>"):
            r.tk.call("bind", "Text", seq, "# the window switches tabs (ui/menus.py)")
        for seq, step in (("<Control-Tab>", +1), ("<Control-Shift-Tab>", -1), ("<Control-ISO_Left_Tab>", -1),
                          ("<Control-Shift-ISO_Left_Tab>", -1)):
            try:
                r.bind(seq, partial(self._step_tab, step))  # replaces: one window owns the root
            except tk.TclError:  # a keysym this Tk does not know
                pass

    def insert_mcp_prompt(self) -> None:
        """Edit › Insert MCP Prompt… (and the palette): the active editor's dialog."""
        ed = self.tab_pages.active_editor()
        if ed is not None:
            ed.insert_mcp_prompt()

    def toggle_history(self) -> None:
        """View › Toggle Run History (Ctrl+Shift+H): the active editor's run history opens with
        the keyboard focus on its runs (so the arrows pick runs at once), or closes."""
        ed = self.tab_pages.active_editor()
        if ed is None:
            return
        ed.toggle_history()
        if ed.history_panel is not None:
            ed.history_panel.list.focus_set()

    def _step_tab(self, delta: int, _e: Any = None) -> str:
        self.tab_pages.step_tab(delta)
        return "break"

    def _focus_event(self, name: str) -> None:
        w = self.root.focus_get()
        if w is not None:
            w.event_generate(name)


def _choose(var: Any, value: str, then: Callable[[], Any]) -> None:
    """A radio entry run from the palette or its shortcut: set the choice, then apply it."""
    var.set(value)
    then()


def _toggle(var: Any, then: Callable[[], Any]) -> None:
    """A check entry run from the palette: flip it, then apply it."""
    var.set(not var.get())
    then()
