"""How the window looks: the theme (light, dark, system), the rendering of messages (rich
or plain text), whether replies render as Markdown, and the zoom, as chosen in the View menu, its shortcuts and Settings ›
General. Applying a choice restyles the root and tells every open editor; the choices are
saved with the window state (`on_change`; `ui/main_window.py` saves them).

`Appearance` is a component of `ui/main_window.MainWindow` (`window.appearance`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..presenters.state import ZOOM_STEP, clamp_zoom
from . import theme as themes
from . import tkvars

if TYPE_CHECKING:
    from ..presenters.state import WindowState
    from .status_bar import StatusBar


class Appearance:
    """The theme and rendering choices (Tk variables the menus and dialogs bind to) and the zoom."""

    def __init__(self, root: Any, frame: WindowState, theme: str, rendering: str, status: StatusBar,
                 editors: Callable[[], Iterable[Any]], on_change: Callable[[], None], markdown: bool = True) -> None:
        self.root, self.frame, self.status = root, frame, status
        self.editors, self.on_change = editors, on_change
        self.theme_var = tkvars.StringVar(root, theme)
        self.render_var = tkvars.StringVar(root, rendering)
        self.markdown_var = tkvars.BooleanVar(root, markdown)

    def apply_theme(self) -> None:
        self.root.style.theme_use(themes.theme_name(self.theme_var.get()))
        themes.style_sashes(self.root)
        themes.style_selection(self.root)
        themes.restyle_menus(self.root)
        if self.frame.zoom != 1.0:
            themes.fit_tree_rows(self.root, self.frame.zoom)  # a theme switch resets the row height
        for ed in self.editors():
            ed.theme_changed()
        self.on_change()

    def apply_rendering(self) -> None:
        for ed in self.editors():
            ed.set_rendering(self.render_var.get())
        self.on_change()

    def apply_markdown(self) -> None:
        """View › Render Markdown: replies drawn as Markdown, or as the raw text."""
        on = bool(self.markdown_var.get())
        for ed in self.editors():
            ed.set_markdown(on)
        self.on_change()

    def zoom(self, direction: int) -> None:
        """Ctrl++ / Ctrl+- (direction ±1) and Ctrl+0 (0: back to 100 %)."""
        z = 1.0 if direction == 0 else clamp_zoom(self.frame.zoom + direction * ZOOM_STEP)
        self.frame.zoom = z
        themes.apply_zoom(self.root, z)
        self.status.set(f"Zoom {round(z * 100)} %")
        self.on_change()
