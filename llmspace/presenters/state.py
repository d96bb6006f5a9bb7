"""Persisted UI state: `settings/window.json` (frame, maximised, zoom — the original app's
shape) and `settings/ui-state.json` (theme, open tabs, active tab, expanded folders,
run switches, rendering mode). Both are settings files: pretty JSON with a trailing newline,
written through `llmspace.jsonio`. An unreadable or wrong-shaped file (malformed JSON, not
an object, a known key of the wrong type) falls back to defaults, is reported in
`StateStore.problems` (the main window shows it) and is never overwritten: saves to it are
skipped until the user fixes or deletes it. A file holding `null` is such a file too. A
save that fails (full disk, a value no JSON file can hold) is logged and added to
`problems`; it never raises into the UI.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ..errors import UserFacingError
from ..jsonio import SETTINGS_MAX_BYTES, read_json, write_json_atomic
from ..paths import DataRoot

log = logging.getLogger("llmspace.presenters.state")

_State = TypeVar("_State")

ZOOM_MIN, ZOOM_MAX, ZOOM_STEP = 0.3, 3.0, 0.1
THEMES = ("light", "dark", "system")


def clamp_zoom(z: float) -> float:
    return round(min(ZOOM_MAX, max(ZOOM_MIN, z)), 2)


def _number(v: Any) -> bool:
    """A finite JSON number of a sane size (NaN, Infinity and 1e308 are not window sizes)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and abs(v) < 1e6


def _check(data: dict[str, Any], key: str, ok: Any, expected: str, problems: list[str] | None) -> bool:
    """True when `key` is present and valid; a present but invalid value is noted in `problems`."""
    if key not in data:
        return False
    if ok(data[key]):
        return True
    if problems is not None:
        problems.append(f"{key}: expected {expected}")
    return False


def _str_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(t, str) for t in v)


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
    def from_data(cls, data: Any, problems: list[str] | None = None) -> WindowState:
        """Parse window.json; values of the wrong type keep their defaults and are noted in `problems`."""
        st = cls()
        if not isinstance(data, dict):
            if data is not None and problems is not None:
                problems.append("expected a JSON object")
            return st
        st.extra = {k: v for k, v in data.items() if k not in ("frame", "isMaximized", "isFullScreen", "zoom")}
        if _check(data, "frame", lambda v: isinstance(v, dict), "an object", problems):
            frame = data["frame"]
            bad: list[str] = []
            for key in ("x", "y", "width", "height"):
                if _check(frame, key, _number, "a number", bad):
                    setattr(st, key, int(frame[key]))
            if problems is not None:
                problems.extend(f"frame.{p}" for p in bad)
        st.width = max(st.width, 400)
        st.height = max(st.height, 300)
        st.maximized = data.get("isMaximized") is True
        _check(data, "isMaximized", lambda v: isinstance(v, bool), "true or false", problems)
        st.fullscreen = data.get("isFullScreen") is True
        _check(data, "isFullScreen", lambda v: isinstance(v, bool), "true or false", problems)
        if _check(data, "zoom", _number, "a number", problems):
            st.zoom = clamp_zoom(float(data["zoom"]))
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
    markdown: bool = True  # View › Render Markdown
    welcomed: bool = False

    @classmethod
    def from_data(cls, data: Any, problems: list[str] | None = None) -> UiState:
        """Parse ui-state.json; values of the wrong type keep their defaults and are noted in `problems`."""
        st = cls()
        if not isinstance(data, dict):
            if data is not None and problems is not None:
                problems.append("expected a JSON object")
            return st
        flag = (lambda v: isinstance(v, bool), "true or false")
        if _check(data, "theme", lambda v: v in THEMES, "one of " + ", ".join(THEMES), problems):
            st.theme = data["theme"]
        if _check(data, "openTabs", _str_list, "a list of thread paths", problems):
            st.open_tabs = list(data["openTabs"])
        if _check(data, "activeTab", lambda v: v is None or isinstance(v, str), "a thread path or null", problems):
            st.active_tab = data["activeTab"]
        if _check(data, "expandedFolders", _str_list, "a list of folder paths", problems):
            st.expanded = list(data["expandedFolders"])
        st.react = _check(data, "reactLoop", *flag, problems) and data["reactLoop"]
        st.auto_run_tools = _check(data, "autoRunTools", *flag, problems) and data["autoRunTools"]
        if _check(data, "renderingFidelity", lambda v: v in ("rich", "lite"), "rich or lite", problems):
            st.rendering = data["renderingFidelity"]
        st.welcomed = _check(data, "welcomed", *flag, problems) and data["welcomed"]
        if _check(data, "renderMarkdown", *flag, problems):
            st.markdown = data["renderMarkdown"]
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
            "renderMarkdown": self.markdown,
            "welcomed": self.welcomed,
        }


class StateStore:
    """Loads and saves the two UI settings files of one data root.

    `problems` lists what was wrong with the files at load (one line per file, fit to show);
    a file with a problem is left exactly as it is: `save_*` skips it."""

    def __init__(self, root: DataRoot) -> None:
        self.window_path = root.settings_file("window")
        self.ui_path = root.settings_file("ui-state")
        self.problems: list[str] = []
        self._kept: set[Path] = set()  # unreadable or wrong-shaped files: never overwritten

    def _load(self, path: Path, parse: Callable[[Any, list[str] | None], _State]) -> _State:
        self._kept.discard(path)
        self.problems = [p for p in self.problems if not p.startswith(f"{path}:")]
        found: list[str] = []
        data = None
        if path.exists():
            try:
                data = read_json(path, max_bytes=SETTINGS_MAX_BYTES)
            except UserFacingError as exc:
                found.append(exc.message.removeprefix(f"{path}: "))
            except Exception as exc:  # any other surprise: still only a settings file
                found.append(f"could not be read ({type(exc).__name__})")
            else:
                if data is None:  # `null` is a file, not a missing one: report it, keep it
                    found.append("expected a JSON object, found null")
        state = parse(data, found)
        if found:
            self._kept.add(path)
            problem = (f"{path}: {'; '.join(f.rstrip('.') for f in found)}. The defaults are used; the file is left unchanged "
                       "and changes are not saved to it until you fix or delete it.")
            self.problems.append(problem)
            log.warning("%s", problem)
            return parse(None, None)
        return state

    def _save(self, path: Path, data: dict[str, Any]) -> bool:
        """Write one file; False when skipped (kept file) or failed (reported in `problems`
        and the log — a state save never raises into the UI)."""
        if path in self._kept:
            log.info("not saving %s: it was unreadable at start and is left as it is", path)
            return False
        try:
            write_json_atomic(path, data, trailing_newline=True)
        except UserFacingError as exc:
            problem = str(exc)
            if problem not in self.problems:
                self.problems.append(problem)
            log.warning("%s", problem)
            return False
        return True

    def load_window(self) -> WindowState:
        return self._load(self.window_path, WindowState.from_data)

    def save_window(self, st: WindowState) -> bool:
        return self._save(self.window_path, st.to_data())

    def load_ui(self) -> UiState:
        return self._load(self.ui_path, UiState.from_data)

    def save_ui(self, st: UiState) -> bool:
        return self._save(self.ui_path, st.to_data())
