"""Attach MCP resource…: pick a server and one of its resources or resource templates (a
template's variables are filled with the server's completions as you type,
`ui/mcp_completion.py`), and Attach: the resource is read and added to the user message —
text (and `text/*` data) as text naming the URI, images as images, literally (never
rendered as a template). What cannot be attached (another binary type, over 10 MB) is
refused in the dialog with the reason. Listing, completing and reading run on workers
(results via the pump); logic in `presenters/mcp_content.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ..errors import error_text
from ..presenters.mcp_content import McpContentPresenter, ResourceItem
from .mcp_completion import CompletingField, ServerPicker

if TYPE_CHECKING:
    from .pump import Pump


class McpResourceDialog(tb.Toplevel):
    def __init__(self, master: Any, pump: Pump, presenter: McpContentPresenter, message_id: str,
                 on_attached: Callable[[str, str, str], None] | None = None) -> None:
        super().__init__(master=master)
        self.title("Attach MCP resource")
        self.pump, self.p, self.message_id, self.on_attached = pump, presenter, message_id, on_attached
        self.server_id: str | None = None
        self._shown_for: object = None  # the prompt or resource whose fields are shown
        self.items: list[ResourceItem] = []
        self.fields: dict[str, CompletingField] = {}
        self.attached = False
        body = tb.Frame(self, padding=10)
        body.pack(fill="both", expand=True)
        row = tb.Frame(body)
        row.pack(fill="x")
        tb.Label(row, text="Server").pack(side="left")
        servers = presenter.servers()
        self.server = ServerPicker(row, servers, self.load)
        self.server.pack(side="left", padx=6)
        tb.Label(body, text="Resource").pack(anchor="w", pady=(8, 0))
        self.listbox = tb.Treeview(body, show="tree", height=8, selectmode="browse")
        self.listbox.pack(fill="x")
        self.listbox.bind("<<TreeviewSelect>>", lambda e: self.show_variables(), add=True)
        self.vars_box = tb.Frame(body, padding=(0, 6))
        self.vars_box.pack(fill="x")
        self.status = tb.Label(body, text="" if servers else "No MCP server is enabled: add one in Settings › MCP.",
                               bootstyle="secondary", wraplength=520)
        self.status.pack(anchor="w")
        buttons = tb.Frame(body)
        buttons.pack(fill="x", pady=(8, 0))
        self.attach_btn = tb.Button(buttons, text="Attach", bootstyle="primary", command=self.attach, state="disabled")
        self.attach_btn.pack(side="left")
        tb.Button(buttons, text="Close", bootstyle="link", command=self.destroy).pack(side="left", padx=6)
        self.bind("<Escape>", lambda e: self.destroy())
        if len(servers) == 1:
            self.server.pick(servers[0][1])

    def _say(self, text: str, style: str = "secondary") -> None:
        if self.winfo_exists():
            self.status.configure(text=text, bootstyle=style)

    def load(self, server_id: str) -> None:
        """List the server's resources and templates (in a worker)."""
        self.server_id = server_id
        self.listbox.delete(*self.listbox.get_children(""))
        self.show_variables()
        self._say("Listing resources…")
        presenter = self.p

        def done(future: Future[list[ResourceItem]]) -> None:
            if not self.winfo_exists() or self.server_id != server_id:
                return
            try:
                self.items = future.result()
            except Exception as exc:
                self._say(error_text(exc), "danger")
                return
            for i, item in enumerate(self.items):
                self.listbox.insert("", "end", iid=str(i), text=item.shown)
            self._say("" if self.items else "This server offers no resources.")

        self.pump.run_in_worker(lambda: presenter.resources(server_id), done, name="mcp-resources")

    def chosen(self) -> ResourceItem | None:
        sel = self.listbox.selection()
        return self.items[int(sel[0])] if sel and int(sel[0]) < len(self.items) else None

    def select(self, name: str) -> None:
        """Select the resource or template called `name` (as a click on it does)."""
        index = next(i for i, item in enumerate(self.items) if item.name == name)
        self.listbox.selection_set(str(index))
        self.show_variables()

    def show_variables(self) -> None:
        chosen = self.chosen()
        if chosen is not None and chosen is self._shown_for:  # selecting it again keeps what was typed
            return
        self._shown_for = chosen
        for child in self.vars_box.winfo_children():
            child.destroy()
        self.fields.clear()
        item = self.chosen()
        self.attach_btn.configure(state="normal" if item is not None else "disabled")
        if item is None or not item.template:
            return
        for name in item.variables():
            tb.Label(self.vars_box, text=f"{name} *").pack(anchor="w")
            field = CompletingField(self.vars_box, self.pump, self._completer(item, name), self.values)
            field.pack(anchor="w", fill="x")
            self.fields[name] = field

    def _completer(self, item: ResourceItem, variable: str) -> Callable[[str, dict[str, str]], list[str]]:
        presenter, server_id = self.p, self.server_id or ""

        def complete(prefix: str, others: dict[str, str]) -> list[str]:
            return presenter.complete_template(server_id, item, variable, prefix, others)

        return complete

    def values(self) -> dict[str, str]:
        return {name: field.var.get() for name, field in self.fields.items()}

    def attach(self) -> None:
        """Read the resource (in a worker) and attach it to the message; a refusal is shown here."""
        item, server_id = self.chosen(), self.server_id
        if item is None or server_id is None:
            return
        try:
            uri = item.expand(self.values())
        except Exception as exc:
            self._say(error_text(exc), "danger")
            return
        presenter, mid = self.p, self.message_id
        self.attach_btn.configure(state="disabled")
        self._say(f"Reading {uri}…")

        def done(future: Future[list[dict[str, Any]]]) -> None:
            if not self.winfo_exists():
                return
            self.attach_btn.configure(state="normal")
            try:
                presenter.attach(mid, future.result(), server_id)
            except Exception as exc:
                self._say(error_text(exc), "danger")
                return
            self.attached = True
            if self.on_attached is not None:  # (message id, server id, uri)
                self.on_attached(mid, server_id, uri)
            self.destroy()

        self.pump.run_in_worker(lambda: presenter.read_parts(server_id, uri), done, name="mcp-read")
