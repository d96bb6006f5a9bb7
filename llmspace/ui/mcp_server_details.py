"""The details of one MCP server under Settings › MCP's lists, shown after Connect & Test:
protocol revision, capabilities, counts of tools, prompts and resources, pinned tools, and a
notice for each tool that changed its definition since the user trusted it — the difference
and an "Accept change" button (the tool is offered again once accepted). Fetching and
accepting run in worker threads (results via the pump); logic in `presenters/mcp_details.py`.
"""

from __future__ import annotations

import tkinter as tk
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ..errors import error_text
from ..presenters import mcp_details
from ..presenters.mcp_details import ServerDetails

if TYPE_CHECKING:
    from ..mcp.hub import McpHub
    from .pump import Pump

DIFF_LINES = 8


class ServerDetailsPanel(tb.Labelframe):
    def __init__(self, master: Any, pump: Pump, hub: McpHub, on_changed: Callable[[], None]) -> None:
        super().__init__(master, text="Server details (Connect & Test shows them)", padding=6)
        self.pump, self.hub, self.on_changed = pump, hub, on_changed
        self.shown: ServerDetails | None = None
        self.summary = tb.Label(self, text="", justify="left", wraplength=860)
        self.summary.pack(anchor="w")
        self.notices = tb.Frame(self)
        self.notices.pack(fill="x")
        self.accept_buttons: dict[str, tb.Button] = {}
        self.diffs: dict[str, tk.Text] = {}

    def load(self, server_id: str) -> None:
        """Fetch and show the server's details (in a worker)."""
        self.summary.configure(text="Reading the server's details…", bootstyle="secondary")
        hub = self.hub

        def done(future: Future[ServerDetails]) -> None:
            if not self.winfo_exists():
                return
            try:
                self.show(future.result())
            except Exception as exc:
                self.summary.configure(text=error_text(exc), bootstyle="danger")

        self.pump.run_in_worker(lambda: mcp_details.details(hub, server_id), done, name="mcp-details")

    def show(self, details: ServerDetails) -> None:
        self.shown = details
        self.configure(text=f"Server details: {details.name}")
        self.summary.configure(text="\n".join(details.lines()), bootstyle="default")
        for child in self.notices.winfo_children():
            child.destroy()
        self.accept_buttons.clear()
        self.diffs.clear()
        for tool in details.changed:
            box = tb.Labelframe(self.notices, text=f"⚠ {tool.name} changed since you trusted it", padding=4,
                                bootstyle="warning")
            box.pack(fill="x", pady=(6, 0))
            tb.Label(box, text="This tool is not offered to a model or callable until you accept its new "
                               "definition. Read the difference first:", wraplength=820, justify="left").pack(anchor="w")
            text = tk.Text(box, height=min(DIFF_LINES, max(2, tool.diff.count("\n") + 1)), width=100, wrap="none")
            text.insert("1.0", tool.diff)
            text.configure(state="disabled")
            text.pack(fill="x")
            self.diffs[tool.name] = text
            button = tb.Button(box, text="Accept change", bootstyle="warning-outline",
                               command=lambda name=tool.name: self.accept(name))
            button.pack(anchor="w", pady=(4, 0))
            self.accept_buttons[tool.name] = button

    def accept(self, tool: str) -> None:
        """Trust the tool's new definition (in a worker), then show the details again."""
        details = self.shown
        if details is None:
            return
        self.accept_buttons[tool].configure(state="disabled", text="Accepting…")
        hub, sid = self.hub, details.server_id

        def done(future: Future[list[str]]) -> None:
            if not self.winfo_exists():
                return
            try:
                future.result()
            except Exception as exc:
                self.summary.configure(text=error_text(exc), bootstyle="danger")
                return
            self.on_changed()
            self.load(sid)

        self.pump.run_in_worker(lambda: mcp_details.accept(hub, sid, tool), done, name="mcp-trust")
