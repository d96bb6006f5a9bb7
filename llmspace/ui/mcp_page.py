"""Settings › MCP page: the user's servers with readiness, add (stdio command or HTTP/SSE
URL), enable/disable, remove; apart from them the MCPs in plugins, read-only, naming the
plugin, with readiness and their tools (expand a server to see them). Connect & Test runs
in a worker thread for either list (result via the pump) and then shows the server's details
below the lists (`ui/mcp_server_details.py`: protocol revision, capabilities, counts, pinned
tools, changed tools with their difference and Accept). Logic in `presenters/mcp_page.py`.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ..errors import error_text
from ..presenters.mcp_page import McpPagePresenter
from . import tkvars
from .follow import follow
from .list_page import ListActions
from .mcp_server_details import ServerDetailsPanel

if TYPE_CHECKING:
    from ..mcp.hub import McpHub
    from .services import UiServices


class McpPage(tb.Frame):
    def __init__(self, master: Any, ui: UiServices, mcp: McpHub) -> None:
        super().__init__(master, padding=6)
        self.ui = ui
        self.p = McpPagePresenter(mcp)
        self.list = tb.Treeview(self, columns=("transport", "target", "status"), show="tree headings", height=6,
                                selectmode="browse")
        self.list.heading("#0", text="Server")
        for col, label, w in (("transport", "Transport", 80), ("target", "Command / URL", 260), ("status", "Status", 200)):
            self.list.heading(col, text=label)
            self.list.column(col, width=w, stretch=col == "target")
        self.list.pack(fill="x")
        row = tb.Frame(self)
        row.pack(fill="x", pady=4)
        tb.Button(row, text="Connect & Test", bootstyle="primary-outline", command=self.test).pack(side="left")
        tb.Button(row, text="Enable", bootstyle="link", command=lambda: self.enable(True)).pack(side="left")
        tb.Button(row, text="Disable", bootstyle="link", command=lambda: self.enable(False)).pack(side="left")
        tb.Button(row, text="Remove", bootstyle="danger-link", command=self.remove).pack(side="right")
        box = tb.Labelframe(self, text="Add a server", padding=6)
        box.pack(fill="x", pady=6)
        self.name = tkvars.StringVar(self, "")
        self.transport = tkvars.StringVar(self, "stdio")
        self.target = tkvars.StringVar(self, "")
        tb.Label(box, text="Name").grid(row=0, column=0, sticky="w")
        tb.Entry(box, textvariable=self.name, width=24).grid(row=0, column=1, sticky="w", padx=4)
        tb.Combobox(box, values=["stdio", "http", "sse"], textvariable=self.transport, state="readonly", width=8).grid(row=0, column=2, padx=4)
        tb.Label(box, text="Command or URL").grid(row=1, column=0, sticky="w")
        tb.Entry(box, textvariable=self.target, width=56).grid(row=1, column=1, columnspan=2, sticky="w", padx=4, pady=2)
        tb.Button(box, text="Add", bootstyle="primary", command=self.add).grid(row=1, column=3, padx=4)
        box = tb.Labelframe(self, text="MCPs in plugins (configured by their plugin: see Settings › Plugins)", padding=4)
        box.pack(fill="both", expand=True)
        self.plugin_list = tb.Treeview(box, columns=("plugin", "transport", "target", "status"), show="tree headings",
                                       height=5, selectmode="browse")
        self.plugin_list.heading("#0", text="Server / tool")
        for col, label, w in (("plugin", "Plugin", 110), ("transport", "Transport", 80), ("target", "Command / URL", 240),
                              ("status", "Status", 180)):
            self.plugin_list.heading(col, text=label)
            self.plugin_list.column(col, width=w, stretch=col == "target")
        self.plugin_list.pack(fill="both", expand=True)
        row = tb.Frame(box)
        row.pack(fill="x", pady=(4, 0))
        tb.Button(row, text="Connect & Test", bootstyle="primary-outline", command=self.test_plugin).pack(side="left")
        self.plugin_notes = tb.Label(row, text="", bootstyle="warning", wraplength=640, justify="left")
        self.plugin_notes.pack(side="left", padx=8)
        self.msg = tb.Label(self, text="", bootstyle="secondary", wraplength=880)
        self.msg.pack(anchor="w")
        self.details = ServerDetailsPanel(self, ui.pump, mcp, self.refresh)
        self.details.pack(fill="x", pady=(4, 0))
        self.actions = ListActions(self.list, self.msg, self.refresh)
        self.refresh()
        follow(self, ui.pump, (mcp.directory.registry.subscribe,), self.refresh)  # plugin servers come and go

    def refresh(self) -> None:
        self.list.delete(*self.list.get_children(""))
        for r in self.p.rows():
            self.list.insert("", "end", iid=r.id, text=r.name, values=(r.transport, r.target, r.status))
        sel = self.plugin_list.selection()
        keep = (self.plugin_list.parent(sel[0]) or sel[0]) if sel else None
        self.plugin_list.delete(*self.plugin_list.get_children(""))
        rows = self.p.plugin_rows()
        for r in rows:
            self.plugin_list.insert("", "end", iid=r.id, text=r.name, values=(r.plugin, r.transport, r.target, r.status),
                                    open=r.id == keep)
            for tool in r.tools:
                self.plugin_list.insert(r.id, "end", text=tool, values=("", "", "", "tool"))
        if not rows:
            self.plugin_list.insert("", "end", text="(none)", values=("", "", "No active plugin brings an MCP server.", ""))
        if keep and self.plugin_list.exists(keep):
            self.plugin_list.selection_set(keep)
        self.plugin_notes.configure(text="\n".join(self.p.plugin_conflicts()))

    def add(self) -> bool:
        return self.actions.guard(self.p.add, self.name.get(), self.transport.get(), self.target.get())

    def enable(self, on: bool) -> bool:
        sid = self.actions.selected()
        return bool(sid) and self.actions.guard(self.p.set_enabled, sid, on)

    def remove(self) -> bool:
        sid = self.actions.selected()
        if not sid or not self.ui.dialogs.confirm("Remove this MCP server?", "Remove server"):
            return False
        return self.actions.guard(self.p.remove, sid)

    def test(self) -> bool:
        return self._test(self.actions.selected())

    def test_plugin(self) -> bool:
        sel = self.plugin_list.selection()
        sid = (self.plugin_list.parent(sel[0]) or sel[0]) if sel else None  # a tool row tests its server
        return self._test(sid if sid and sid.startswith("plugin:") else None)

    def _test(self, sid: str | None) -> bool:
        if not sid:
            self.msg.configure(text="Select a server first.", bootstyle="secondary")
            return False
        self.msg.configure(text="Connecting…", bootstyle="secondary")
        presenter = self.p

        def done(future: Future[Any]) -> None:
            try:
                text, ok = presenter.describe_result(future.result())
            except Exception as exc:
                self._tested(error_text(exc), "danger")
                return
            self._tested(text, "success" if ok else "danger", sid if ok else None)

        self.ui.pump.run_in_worker(lambda: presenter.test(sid), done, name="mcp-test")
        return True

    def _tested(self, text: str, style: str, sid: str | None = None) -> None:
        if self.winfo_exists():
            self.msg.configure(text=text, bootstyle=style)
            self.refresh()
            if sid is not None:
                self.details.load(sid)
