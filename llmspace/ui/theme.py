"""Themes and zoom: maps the app's light/dark/system choice to ttkbootstrap 2.x themes and
scales Tk's named fonts for zoom. Callers: `ui/main_window.py`.
"""

from __future__ import annotations

import os
import subprocess
import tkinter.font as tkfont
from typing import Any

LIGHT, DARK = "bootstrap-light", "bootstrap-dark"
_BASE_SIZES: dict[str, int] = {}


def system_prefers_dark() -> bool:
    """Best effort, fast: GTK_THEME, then the GNOME colour-scheme (only when gsettings exists)."""
    if "dark" in os.environ.get("GTK_THEME", "").lower():
        return True
    if os.environ.get("LLMSPACE_NO_SYSTEM_PROBE"):
        return False
    try:
        out = subprocess.run(["gsettings", "get", "org.gnome.desktop.interface", "color-scheme"],
                             capture_output=True, text=True, timeout=0.3).stdout
        return "dark" in out
    except (OSError, subprocess.SubprocessError):
        return False


def theme_name(choice: str) -> str:
    if choice == "dark":
        return DARK
    if choice == "light":
        return LIGHT
    return DARK if system_prefers_dark() else LIGHT


def is_dark(root: Any) -> bool:
    try:
        return "dark" in root.style.theme_use()
    except Exception:
        return False


def apply_zoom(root: Any, zoom: float) -> None:
    """Scale every named font (the text of all widgets) by `zoom`."""
    for name in tkfont.names(root):
        f = tkfont.nametofont(name, root=root)
        base = _BASE_SIZES.setdefault(name, int(f.cget("size")) or 10)
        size = max(6, round(abs(base) * zoom))
        f.configure(size=size if base > 0 else -size)
    fit_tree_rows(root)


def fit_tree_rows(root: Any) -> None:
    """Make Treeview rows as tall as the (zoomed) text, so zoomed-in rows do not overlap."""
    from tkinter import ttk

    try:
        line = tkfont.nametofont("TkDefaultFont", root=root).metrics("linespace")
        ttk.Style(master=root).configure("Treeview", rowheight=int(line) + 4)
    except Exception:  # a missing font or style must never break zooming
        pass


def style_sashes(root: Any) -> None:
    """Dividers between panes: 8 px wide with grip dots, so they can be seen and grabbed
    (the theme's 2 px line without a grip was hard to find). Kept across theme changes."""
    try:
        root.style.configure("Sash", sashthickness=8, gripcount=12)
    except Exception:  # cosmetic: never fail to open the window over it
        pass


def style_listbox(listbox: Any) -> Any:
    """Give a plain tk.Listbox the current theme's input colours (ttk themes do not reach it,
    so it stayed white in the dark theme)."""
    try:
        import ttkbootstrap as tb

        colors = tb.Style().colors
        listbox.configure(background=colors.inputbg, foreground=colors.inputfg,
                          selectbackground=colors.selectbg, selectforeground=colors.selectfg,
                          highlightthickness=1, highlightbackground=colors.border, highlightcolor=colors.primary,
                          borderwidth=0)
    except Exception:  # colours are cosmetic: never fail to open a dialog over them
        pass
    return listbox
