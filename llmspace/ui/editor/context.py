"""What an editor tab is built with (`EditorContext`), instead of the main window: the UI
services, the App, the window's run switches and rendering choice, and the tabs and tree
(a title edit renames the file; a forked run opens as a new thread), and whether replies
render as Markdown.

Made once by `ui/tab_pages.TabPages` for every `ui/editor/view.EditorView` it builds; the
view's parts reach it as `view.ctx` (and `view.ui`, `view.app`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...app import App
    from ..services import RunSwitches, UiServices
    from ..tab_pages import TabPages
    from ..tree_view import TreeView


@dataclass(frozen=True)
class EditorContext:
    ui: UiServices
    app: App
    switches: RunSwitches  # Enable ReAct loop / Auto run tools
    rendering: Callable[[], str]  # "rich" or "lite", as chosen now
    tabs: TabPages
    tree: TreeView
    markdown: Callable[[], bool] = field(default=lambda: True)  # View › Render Markdown, as chosen now
