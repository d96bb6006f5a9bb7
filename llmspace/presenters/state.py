"""Persisted UI state: `settings/window.json` (frame, maximised, zoom — the original app's
shape) and `settings/ui-state.json` (theme, open tabs, active tab, expanded folders,
run switches, rendering mode). Both are settings files: pretty JSON with a trailing newline,
written through `llmspace.jsonio`. Unreadable files fall back to defaults and are not
overwritten until the user changes something.

Callers: `ui/main_window.py` (load at start, save on change and on quit), tests.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..jsonio import read_json, write_json_atomic
from ..paths import DataRoot

log = logging.getLogger("llmspace.presenters.state")

ZOOM_MIN, ZOOM_MAX, ZOOM_STEP = 0.3, 3.0, 0.1
THEMES = ("light", "dark", "system")


def clamp_zoom(z: float) -> float:
    return round(min(ZOOM_MAX, max(ZOOM_MIN, z)), 2)


@dataclass
class WindowState:
    x: int = 80
    y: int = 80
    width: int = 1280
    height: int = 800
    maximized: bool = False
    fullscreen: bool = False
    zoom: float = 1.0
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_data(cls, data: Any) -> "WindowState":
        st = cls()
        if not isinstance(data, dict):
            return st
        st.extra = {k: v for k, v in data.items() if k not in ("frame", "isMaximized", "isFullScreen", "zoom")}
        frame = data.get("frame")
        if isinstance(frame, dict):
            for key in ("x", "y", "width", "height"):
                v = frame.get(key)
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    setattr(st, key, int(v))
        st.width = max(st.width, 400)
        st.height = max(st.height, 300)
        st.maximized = data.get("isMaximized") is True
        st.fullscreen = data.get("isFullScreen") is True
        z = data.get("zoom")
        if isinstance(z, (int, float)) and not isinstance(z, bool):
            st.zoom = clamp_zoom(float(z))
        return st

    def to_data(self) -> dict[str, Any]:
        return {
            "frame": {"x": self.x, "y": self.y, "width": self.width, "height": self.height},
            "isMaximized": self.maximized,
            "isFullScreen": self.fullscreen,
            "zoom": self.zoom,
            **self.extra,
        }

    def geometry(self) -> str:
        return f"{self.width}x{self.height}+{self.x}+{self.y}"


@dataclass
class UiState:
    theme: str = "system"
    open_tabs: list[str] = field(default_factory=list)
    active_tab: str | None = None
    expanded: list[str] = field(default_factory=list)
    react: bool = False
    auto_run_tools: bool = False
    rendering: str = "rich"  # "rich" | "lite"
    welcomed: bool = False

    @classmethod
    def from_data(cls, data: Any) -> "UiState":
        st = cls()
        if not isinstance(data, dict):
            return st
        if data.get("theme") in THEMES:
            st.theme = data["theme"]
        st.open_tabs = [t for t in data.get("openTabs", []) if isinstance(t, str)]
        st.active_tab = data.get("activeTab") if isinstance(data.get("activeTab"), str) else None
        st.expanded = [t for t in data.get("expandedFolders", []) if isinstance(t, str)]
        st.react = data.get("reactLoop") is True
        st.auto_run_tools = data.get("autoRunTools") is True
        st.rendering = "lite" if data.get("renderingFidelity") == "lite" else "rich"
        st.welcomed = data.get("welcomed") is True
        return st

    def to_data(self) -> dict[str, Any]:
        return {
            "theme": self.theme,
            "openTabs": list(self.open_tabs),
            "activeTab": self.active_tab,
            "expandedFolders": list(self.expanded),
            "reactLoop": self.react,
            "autoRunTools": self.auto_run_tools,
            "renderingFidelity": self.rendering,
            "welcomed": self.welcomed,
        }


def _read(path: Path) -> Any:
    if not path.exists():
        return None
    try:
        return read_json(path)
    except Exception as exc:  # a broken settings file must not stop the app
        log.warning("ignoring unreadable %s: %s", path, exc)
        return None


class StateStore:
    """Loads and saves the two UI settings files of one data root."""

    def __init__(self, root: DataRoot) -> None:
        self.window_path = root.settings_file("window")
        self.ui_path = root.settings_file("ui-state")

    def load_window(self) -> WindowState:
        return WindowState.from_data(_read(self.window_path))

    def save_window(self, st: WindowState) -> None:
        write_json_atomic(self.window_path, st.to_data(), trailing_newline=True)

    def load_ui(self) -> UiState:
        return UiState.from_data(_read(self.ui_path))

    def save_ui(self, st: UiState) -> None:
        write_json_atomic(self.ui_path, st.to_data(), trailing_newline=True)
