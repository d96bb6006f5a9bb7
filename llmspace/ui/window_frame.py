"""The main window's frame and its saved state: the minimum size, the icon, size and position
(kept on the screen when the saved frame came from a bigger or removed monitor), maximised,
full screen and zoom in `settings/window.json`; theme, open tabs, active tab, expanded
folders, run switches and rendering in `settings/ui-state.json` (`presenters/state.py`).

A change is saved 300 ms after the last one (moving or resizing the window, or
`changed()` from any part); what goes into ui-state.json is asked of the window at save
time (`collect`). A full or read-only disk is logged and never blocks quitting.
`WindowFrame` is a component of `ui/main_window.MainWindow` (`window.frame`).
"""

from __future__ import annotations

import logging
import tkinter as tk
from collections.abc import Callable
from typing import Any

from ..errors import UserFacingError
from ..presenters.state import StateStore, UiState, WindowState
from . import theme as themes

log = logging.getLogger("llmspace.ui")
MIN_SIZE = (800, 500)
SAVE_DELAY_MS = 300


class WindowFrame:
    """Size, position, maximised, full screen and zoom of the root window, and saving the state."""

    def __init__(self, root: Any, store: StateStore, state: WindowState, ui_state: UiState,
                 collect: Callable[[UiState], None]) -> None:
        self.root, self.store, self.collect = root, store, collect
        self.state, self.ui_state = state, ui_state  # as loaded from `store`
        self._save_job: str | None = None
        self.closed = False

    def restore(self) -> None:
        """Title, minimum size, icon, and the saved frame, maximised state and zoom."""
        self.root.title("LLM Space")
        self.root.minsize(*MIN_SIZE)  # every control stays reachable down to this size
        self._set_icon()
        self.clamp_to_screen()
        self.root.geometry(self.state.geometry())
        if self.state.maximized:
            self.set_maximized(True)
        if self.state.zoom != 1.0:
            themes.apply_zoom(self.root, self.state.zoom)

    def watch(self) -> None:
        """Save the frame whenever the window is moved or resized."""
        self.root.bind("<Configure>", self._on_configure, add=True)

    def _set_icon(self) -> None:
        try:
            from importlib.resources import files

            path = files("llmspace").joinpath("assets/icons/llmspace-256.png")
            if path.is_file():
                self._icon = tk.PhotoImage(master=self.root, file=str(path))
                self.root.iconphoto(True, self._icon)
        except Exception:
            log.debug("no window icon", exc_info=True)

    def clamp_to_screen(self) -> None:
        """A saved frame from a bigger or removed monitor must not put the window off-screen."""
        st = self.state
        sw, sh = self.root.winfo_screenwidth(), self.root.winfo_screenheight()
        # The menu bar sits above the client area on X11 (and a title bar with a window manager):
        # leave room for it, or a screen-high frame pushes the status bar off the bottom.
        sh -= self.menubar_allowance()
        st.width, st.height = min(st.width, max(400, sw)), min(st.height, max(300, sh))
        if not (-st.width + 100 < st.x < sw - 100):
            st.x = max(0, (sw - st.width) // 2)
        if not (0 <= st.y < sh - 100):
            st.y = max(0, (sh - st.height) // 2)
        # Keep the whole frame on the screen when it fits (the default 80,80 1280x800 frame
        # would otherwise hang off a 1280x800 screen).
        st.x = max(0, min(st.x, sw - st.width))
        st.y = max(0, min(st.y, sh - st.height))

    def menubar_allowance(self) -> int:
        try:
            import tkinter.font as tkfont

            return int(tkfont.nametofont("TkMenuFont", root=self.root).metrics("linespace")) + 16
        except Exception:
            return 32

    def toggle_fullscreen(self) -> None:
        self.state.fullscreen = not self.state.fullscreen
        self.root.attributes("-fullscreen", self.state.fullscreen)
        self._schedule_save()

    def set_maximized(self, on: bool) -> None:
        try:
            if self.root.tk.call("tk", "windowingsystem") == "x11":
                self.root.attributes("-zoomed", on)
            else:
                self.root.state("zoomed" if on else "normal")
        except tk.TclError:
            pass

    def is_maximized(self) -> bool:
        try:
            if self.root.tk.call("tk", "windowingsystem") == "x11":
                return bool(self.root.attributes("-zoomed"))
            return self.root.state() == "zoomed"
        except tk.TclError:
            return False

    # -- saving ----------------------------------------------------------------------------
    def _on_configure(self, e: Any) -> None:
        if e.widget is self.root and not self.closed:
            self._schedule_save()

    def _schedule_save(self) -> None:
        if self._save_job is not None:
            self.root.after_cancel(self._save_job)
        self._save_job = self.root.after(SAVE_DELAY_MS, self.save)

    def changed(self) -> None:
        """Something saved in the state changed: save soon (not after closing)."""
        if not self.closed:
            self._schedule_save()

    def save(self) -> None:
        self._save_job = None
        st = self.state
        st.maximized = self.is_maximized()
        if not st.maximized and not st.fullscreen:
            st.width, st.height = self.root.winfo_width(), self.root.winfo_height()
            st.x, st.y = self.root.winfo_x(), self.root.winfo_y()
        self.collect(self.ui_state)
        try:
            if st.width > 1 and st.height > 1:
                self.store.save_window(st)
            self.store.save_ui(self.ui_state)
        except (OSError, UserFacingError) as exc:  # a full or read-only disk must not block quitting
            log.warning("could not save window state: %s", exc)

    def close(self) -> None:
        """Save one last time; nothing is saved after this."""
        self.closed = True
        if self._save_job is not None:
            self.root.after_cancel(self._save_job)
            self._save_job = None
        self.save()
