"""The frame shared by the MCP prompt and resource dialogs: a server picker, the server's
list (prompts, or resources and templates) fetched on a worker, a box of completing fields
for the chosen entry, a status line and one action button whose work runs on a worker
(results via the pump); an error is shown in the status line and keeps the dialog open.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

import ttkbootstrap as tb

from ..errors import error_text
from ..presenters.mcp_content import McpContentPresenter
from .mcp_completion import CompletingField, ServerPicker

if TYPE_CHECKING:
    from .pump import Pump


class Listed(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def shown(self) -> str: ...


ItemT = TypeVar("ItemT", bound=Listed)
ResultT = TypeVar("ResultT")


class McpPickDialog(tb.Toplevel, Generic[ItemT]):
    """`kind` names one entry ("prompt", "resource"); a subclass lists entries (`_list`), fills
    the fields of the chosen one (`_fill`), completes a field (`_complete`) and acts."""

    kind = "entry"

    def __init__(self, master: Any, pump: Pump, presenter: McpContentPresenter, *, title: str, heading: str,
                 action: str, act: Callable[[], None], height: int, fields_label: str = "", note: str = "") -> None:
        super().__init__(master=master)
        self.title(title)
        self.pump, self.p = pump, presenter
        self.server_id: str | None = None
        self._shown_for: object = None  # the entry whose fields are shown
        self.items: list[ItemT] = []
        self.fields: dict[str, CompletingField] = {}
        body = tb.Frame(self, padding=10)
        body.pack(fill="both", expand=True)
        row = tb.Frame(body)
        row.pack(fill="x")
        tb.Label(row, text="Server").pack(side="left")
        servers = presenter.servers()
        self.server = ServerPicker(row, servers, self.load)
        self.server.pack(side="left", padx=6)
        tb.Label(body, text=heading).pack(anchor="w", pady=(8, 0))
        self.listbox = tb.Treeview(body, show="tree", height=height, selectmode="browse")
        self.listbox.pack(fill="x")
        self.listbox.bind("<<TreeviewSelect>>", lambda e: self.show_fields(), add=True)
        if fields_label:
            self.fields_box: Any = tb.Labelframe(body, text=fields_label, padding=6)
            self.fields_box.pack(fill="x", pady=6)
        else:
            self.fields_box = tb.Frame(body, padding=(0, 6))
            self.fields_box.pack(fill="x")
        if note:
            tb.Label(body, text=note, bootstyle="secondary", wraplength=520).pack(anchor="w")
        self.status = tb.Label(body, text="" if servers else "No MCP server is enabled: add one in Settings › MCP.",
                               bootstyle="secondary", wraplength=520)
        self.status.pack(anchor="w")
        buttons = tb.Frame(body)
        buttons.pack(fill="x", pady=(8, 0))
        self.action_btn = tb.Button(buttons, text=action, bootstyle="primary", command=act, state="disabled")
        self.action_btn.pack(side="left")
        tb.Button(buttons, text="Close", bootstyle="link", command=self.destroy).pack(side="left", padx=6)
        self.bind("<Escape>", lambda e: self.destroy())
        if len(servers) == 1:
            self.server.pick(servers[0][1])

    def _list(self, server_id: str) -> list[ItemT]:
        raise NotImplementedError

    def _fill(self, item: ItemT) -> None:
        raise NotImplementedError

    def _complete(self, server_id: str, item: ItemT, name: str, prefix: str, others: dict[str, str]) -> list[str]:
        raise NotImplementedError

    def _say(self, text: str, style: str = "secondary") -> None:
        if self.winfo_exists():
            self.status.configure(text=text, bootstyle=style)

    def load(self, server_id: str) -> None:
        """List the server's entries (in a worker)."""
        self.server_id = server_id
        self.listbox.delete(*self.listbox.get_children(""))
        self.show_fields()
        self._say(f"Listing {self.kind}s…")

        def done(future: Future[list[ItemT]]) -> None:
            if not self.winfo_exists() or self.server_id != server_id:
                return
            try:
                self.items = future.result()
            except Exception as exc:
                self._say(error_text(exc), "danger")
                return
            for i, item in enumerate(self.items):
                self.listbox.insert("", "end", iid=str(i), text=item.shown)
            self._say("" if self.items else f"This server offers no {self.kind}s.")

        self.pump.run_in_worker(lambda: self._list(server_id), done, name=f"mcp-{self.kind}s")

    def chosen(self) -> ItemT | None:
        sel = self.listbox.selection()
        return self.items[int(sel[0])] if sel and int(sel[0]) < len(self.items) else None

    def select(self, name: str) -> None:
        """Select the entry called `name` (as a click on it does)."""
        index = next(i for i, item in enumerate(self.items) if item.name == name)
        self.listbox.selection_set(str(index))
        self.show_fields()

    def show_fields(self) -> None:
        chosen = self.chosen()
        if chosen is not None and chosen is self._shown_for:  # selecting it again keeps what was typed
            return
        self._shown_for = chosen
        for child in self.fields_box.winfo_children():
            child.destroy()
        self.fields.clear()
        self.action_btn.configure(state="normal" if chosen is not None else "disabled")
        if chosen is not None:
            self._fill(chosen)

    def add_field(self, item: ItemT, name: str, label: str) -> CompletingField:
        """A labelled field for `name` whose choices are the server's completions."""
        tb.Label(self.fields_box, text=label).pack(anchor="w")
        field = CompletingField(self.fields_box, self.pump, self._completer(item, name), self.values)
        field.pack(anchor="w", fill="x")
        self.fields[name] = field
        return field

    def _completer(self, item: ItemT, name: str) -> Callable[[str, dict[str, str]], list[str]]:
        server_id = self.server_id or ""

        def complete(prefix: str, others: dict[str, str]) -> list[str]:
            return self._complete(server_id, item, name, prefix, others)

        return complete

    def values(self) -> dict[str, str]:
        return {name: field.var.get() for name, field in self.fields.items()}

    def run_action(self, work: Callable[[], ResultT], take: Callable[[ResultT], None],
                   then: Callable[[], None], name: str) -> None:
        """Run `work` on a worker; `take` its result (an error is shown and keeps the dialog
        open), then `then()` and close."""
        self.action_btn.configure(state="disabled")

        def done(future: Future[ResultT]) -> None:
            if not self.winfo_exists():
                return
            self.action_btn.configure(state="normal")
            try:
                take(future.result())
            except Exception as exc:
                self._say(error_text(exc), "danger")
                return
            then()
            self.destroy()

        self.pump.run_in_worker(work, done, name=name)
