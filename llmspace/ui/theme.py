"""Themes and zoom: maps the app's light/dark/system choice to ttkbootstrap 2.x themes,
scales Tk's named fonts for zoom, and keeps what ttkbootstrap does not reach readable and in
the theme: Tk menus (`style_menu`, `restyle_menus`), selected Treeview rows
(`style_selection`), the editor's own text colours (`palette`), dividers (`style_sashes`),
plain listboxes and Tk's file pickers (`style_file_pickers`) — all measured with `contrast_ratio` (WCAG 2; text needs 4.5:1).
"""

from __future__ import annotations

import os
import subprocess
import tkinter.font as tkfont
from typing import Any

LIGHT, DARK = "bootstrap-light", "bootstrap-dark"
AA = 4.5  # WCAG contrast ratio for text
_BASE_SIZES: dict[str, int] = {}
_THEME_ROWS: dict[str, int] = {}  # each theme's own Treeview row height, as first seen


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
    fit_tree_rows(root, zoom)


def fit_tree_rows(root: Any, zoom: float) -> None:
    """Treeview rows at `zoom`: the theme's own row height scaled, and never shorter than the
    (zoomed) text, so zoomed-in rows do not overlap; at 100 % exactly the theme's height again
    (a zoom round trip used to leave rows 4 px taller than at start, and dialogs of lists with them)."""
    from tkinter import ttk

    try:
        style = ttk.Style(master=root)
        theme = str(style.theme_use())
        default = _THEME_ROWS.setdefault(theme, int(style.lookup("Treeview", "rowheight") or 0) or 20)
        line = int(tkfont.nametofont("TkDefaultFont", root=root).metrics("linespace"))
        style.configure("Treeview", rowheight=default if zoom == 1.0 else max(round(default * zoom), line + 2))
    except Exception:  # a missing font or style must never break zooming
        pass


def luminance(root: Any, colour: str) -> float:
    """Relative luminance (WCAG 2) of any colour Tk knows ("#rrggbb", "white", "SystemButtonFace")."""
    def channel(v: int) -> float:
        c = v / 65535
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(v) for v in root.winfo_rgb(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(root: Any, fg: str, bg: str) -> float:
    """WCAG 2 contrast ratio of two colours, 1 to 21 (text needs 4.5)."""
    a, b = luminance(root, fg), luminance(root, bg)
    return (max(a, b) + 0.05) / (min(a, b) + 0.05)


def best_on(widget: Any, bg: str) -> str:
    """Black or white, whichever reads better on `bg`."""
    return max(("#000000", "#ffffff"), key=lambda c: contrast_ratio(widget, c, bg))


def readable(widget: Any, fg: str, bg: str) -> str:
    """`fg` when it reaches 4.5:1 on `bg`, else black or white."""
    return fg if contrast_ratio(widget, fg, bg) >= AA else best_on(widget, bg)


_PALETTES = {"light": {"var": "#b45309", "tag": "#6d28d9", "muted": "#686d71"},
             "dark": {"var": "#fbbf24", "tag": "#c4b5fd", "muted": "#adb5bd"}}


def _colors() -> Any:
    import ttkbootstrap as tb

    return tb.Style().colors


def palette(widget: Any) -> dict[str, str]:
    """Text colours the editor sets itself, readable on the theme's text background:
    `var` ({{variables}}), `tag` ({% tags %}), `muted` (thinking)."""
    colors = _colors()
    base = _PALETTES["dark" if luminance(widget, colors.inputbg) < 0.2 else "light"]
    return {name: readable(widget, c, colors.inputbg) for name, c in base.items()}


def style_selection(root: Any) -> None:
    """Selected rows of every Treeview (workspace tree, run history, settings lists): the
    theme's selection colour with text that reaches 4.5:1 on it."""
    try:
        style, colors = root.style, root.style.colors
        fg = readable(root, colors.selectfg, colors.selectbg)
        current = [tuple(str(x) for x in entry) for entry in style.map("Treeview", "foreground")]
        keep = [entry for entry in current if "selected" not in entry[:-1]]
        style.map("Treeview", background=[("selected", colors.selectbg)], foreground=[*keep, ("selected", fg)])
    except Exception:  # cosmetic: never fail over colours
        pass


def style_menu(widget: Any, menu: Any) -> Any:
    """Give a Tk menu (menu bar, its menus, popups) the theme's colours, readable when an
    entry is highlighted too; plain `tk.Menu`s made after a theme switch otherwise stay light."""
    try:
        colors = _colors()
        menu.configure(background=colors.bg, foreground=readable(widget, colors.fg, colors.bg),
                       activebackground=colors.selectbg,
                       activeforeground=readable(widget, colors.selectfg, colors.selectbg),
                       selectcolor=colors.primary, disabledforeground=colors.secondary, relief="flat")
    except Exception:  # cosmetic: never fail to show a menu over colours
        pass
    return menu


def restyle_menus(root: Any) -> None:
    """After a theme switch: every menu of the window follows the new theme."""
    stack = [root]
    while stack:
        w = stack.pop()
        if w.winfo_class() == "Menu":
            style_menu(root, w)
        stack.extend(w.winfo_children())


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


# Tk's own file and folder pickers (X11, tkfbox.tcl) draw their file list on a canvas created
# white, with black text put back on each selection change: while one shows, its list follows
# the theme (checked every 150 ms until the picker is withdrawn; it is kept for the next use).
_PICKER_TCL = r"""
proc ::llmspace_picker_colours {w bg fg {wait 60}} {
    if {![winfo exists $w] || ![winfo viewable $w]} {
        if {$wait > 0} { after 100 [list ::llmspace_picker_colours $w $bg $fg [expr {$wait - 1}]] }
        return
    }
    set c $w.contents.icons.cHull.canvas
    if {[winfo exists $c]} {
        $c configure -background $bg
        foreach i [$c find all] {
            if {[$c type $i] eq "text" && "selectionText" ni [$c gettags $i]} { $c itemconfigure $i -fill $fg }
        }
    }
    after 150 [list ::llmspace_picker_colours $w $bg $fg 0]
}
"""


def style_file_pickers(parent: Any) -> None:
    """Call just before a Tk file or folder picker opens over `parent`: it shows in the
    theme's input colours (its list, the menus of its folder and type buttons)."""
    try:
        colors = _colors()
        tk = parent.tk
        if not tk.call("info", "procs", "::llmspace_picker_colours"):
            tk.eval(_PICKER_TCL)
        for cls in ("TkFDialog", "TkChooseDir"):
            parent.option_add(f"*{cls}*Canvas.foreground", colors.inputfg)
            parent.option_add(f"*{cls}*Menu.background", colors.bg)
            parent.option_add(f"*{cls}*Menu.foreground", colors.fg)
            parent.option_add(f"*{cls}*Menu.activeBackground", colors.selectbg)
            parent.option_add(f"*{cls}*Menu.activeForeground", colors.selectfg)
        base = "" if str(parent) == "." else str(parent)
        for name in ("__tk_filedialog", "__tk_choosedir"):
            tk.call("after", "idle", ["::llmspace_picker_colours", f"{base}.{name}", colors.inputbg, colors.inputfg])
    except Exception:  # cosmetic: never fail to open a picker over colours
        pass
