"""The menu bar (File, Edit, View, Run, Window, Help with the reference's commands and
Ctrl shortcuts) and the window-wide key bindings of the main window; every command is also
listed for the command palette. Mixed into `ui/main_window.MainWindow`.
"""

from __future__ import annotations

import tkinter as tk
import webbrowser
from typing import Any

DOCS_URL = "https://deer-flow.github.io/llm-space/"
REPO_URL = "https://github.com/deer-flow/llm-space"


class MenuMixin:
    """Menu bar and key bindings; expects the MainWindow attributes it uses."""

    root: Any

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
        mac = r.tk.call("tk", "windowingsystem") == "aqua"
        for seq, fn in keys.items():
            if mac:  # Cmd on macOS, as the original's ⌘ shortcuts
                seq = seq.replace("Control-", "Command-").replace("Alt-", "Option-")
            r.bind_all(seq, lambda e, f=fn: (f(), "break")[1])

    def _focus_event(self, name: str) -> None:
        w = self.root.focus_get()
        if w is not None:
            w.event_generate(name)

