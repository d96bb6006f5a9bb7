"""Insert MCP prompt…: pick a server and one of its prompts, fill its arguments (each offers
the server's completions as you type, `ui/mcp_completion.py`), and Insert: the prompt's
messages are appended to the thread as the server returned them, literally (never rendered
as a template) and marked as coming from the server. Listing, completing and getting the
prompt run on workers (results via the pump); logic in `presenters/mcp_content.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ..errors import error_text
from ..presenters.mcp_content import McpContentPresenter, PromptInfo
from .mcp_completion import CompletingField, ServerPicker

if TYPE_CHECKING:
    from .pump import Pump


class McpPromptDialog(tb.Toplevel):
    def __init__(self, master: Any, pump: Pump, presenter: McpContentPresenter,
                 on_inserted: Callable[[list[str]], None] | None = None) -> None:
        super().__init__(master=master)
        self.title("Insert MCP prompt")
        self.pump, self.p, self.on_inserted = pump, presenter, on_inserted
        self.server_id: str | None = None
        self._shown_for: object = None  # the prompt or resource whose fields are shown
        self.prompts: list[PromptInfo] = []
        self.fields: dict[str, CompletingField] = {}
        self.inserted: list[str] = []
        body = tb.Frame(self, padding=10)
        body.pack(fill="both", expand=True)
        row = tb.Frame(body)
        row.pack(fill="x")
        tb.Label(row, text="Server").pack(side="left")
        servers = presenter.servers()
        self.server = ServerPicker(row, servers, self.load)
        self.server.pack(side="left", padx=6)
        tb.Label(body, text="Prompt").pack(anchor="w", pady=(8, 0))
        self.listbox = tb.Treeview(body, show="tree", height=6, selectmode="browse")
        self.listbox.pack(fill="x")
        self.listbox.bind("<<TreeviewSelect>>", lambda e: self.show_arguments(), add=True)
        self.args_box = tb.Labelframe(body, text="Arguments", padding=6)
        self.args_box.pack(fill="x", pady=6)
        self.note = tb.Label(body, text="The server's messages are inserted as written: {{…}} in them is never "
                                        "rendered.", bootstyle="secondary", wraplength=520)
        self.note.pack(anchor="w")
        self.status = tb.Label(body, text="" if servers else "No MCP server is enabled: add one in Settings › MCP.",
                               bootstyle="secondary", wraplength=520)
        self.status.pack(anchor="w")
        buttons = tb.Frame(body)
        buttons.pack(fill="x", pady=(8, 0))
        self.insert_btn = tb.Button(buttons, text="Insert", bootstyle="primary", command=self.insert, state="disabled")
        self.insert_btn.pack(side="left")
        tb.Button(buttons, text="Close", bootstyle="link", command=self.destroy).pack(side="left", padx=6)
        self.bind("<Escape>", lambda e: self.destroy())
        if len(servers) == 1:
            self.server.pick(servers[0][1])

    def _say(self, text: str, style: str = "secondary") -> None:
        if self.winfo_exists():
            self.status.configure(text=text, bootstyle=style)

    def load(self, server_id: str) -> None:
        """List the server's prompts (in a worker)."""
        self.server_id = server_id
        self.listbox.delete(*self.listbox.get_children(""))
        self.show_arguments()
        self._say("Listing prompts…")
        presenter = self.p

        def done(future: Future[list[PromptInfo]]) -> None:
            if not self.winfo_exists() or self.server_id != server_id:
                return
            try:
                self.prompts = future.result()
            except Exception as exc:
                self._say(error_text(exc), "danger")
                return
            for i, prompt in enumerate(self.prompts):
                self.listbox.insert("", "end", iid=str(i), text=prompt.shown)
            self._say("" if self.prompts else "This server offers no prompts.")

        self.pump.run_in_worker(lambda: presenter.prompts(server_id), done, name="mcp-prompts")

    def chosen(self) -> PromptInfo | None:
        sel = self.listbox.selection()
        return self.prompts[int(sel[0])] if sel and int(sel[0]) < len(self.prompts) else None

    def select(self, name: str) -> None:
        """Select the prompt called `name` (as a click on it does)."""
        index = next(i for i, p in enumerate(self.prompts) if p.name == name)
        self.listbox.selection_set(str(index))
        self.show_arguments()

    def show_arguments(self) -> None:
        chosen = self.chosen()
        if chosen is not None and chosen is self._shown_for:  # selecting it again keeps what was typed
            return
        self._shown_for = chosen
        for child in self.args_box.winfo_children():
            child.destroy()
        self.fields.clear()
        prompt = self.chosen()
        self.insert_btn.configure(state="normal" if prompt is not None else "disabled")
        if prompt is None:
            return
        if not prompt.arguments:
            tb.Label(self.args_box, text="This prompt takes no arguments.", bootstyle="secondary").pack(anchor="w")
        for arg in prompt.arguments:
            tb.Label(self.args_box, text=arg.name + (" *" if arg.required else "")).pack(anchor="w")
            field = CompletingField(self.args_box, self.pump, self._completer(prompt, arg.name), self.values)
            field.pack(anchor="w", fill="x")
            if arg.description:
                tb.Label(self.args_box, text=arg.description, bootstyle="secondary", wraplength=480).pack(anchor="w")
            self.fields[arg.name] = field

    def _completer(self, prompt: PromptInfo, argument: str) -> Callable[[str, dict[str, str]], list[str]]:
        presenter, server_id = self.p, self.server_id or ""

        def complete(prefix: str, others: dict[str, str]) -> list[str]:
            return presenter.complete_prompt(server_id, prompt.name, argument, prefix, others)

        return complete

    def values(self) -> dict[str, str]:
        return {name: field.var.get() for name, field in self.fields.items()}

    def insert(self) -> None:
        """Get the prompt with the arguments (in a worker) and append its messages to the thread."""
        prompt, server_id = self.chosen(), self.server_id
        if prompt is None or server_id is None:
            return
        values = self.values()
        presenter = self.p
        self.insert_btn.configure(state="disabled")
        self._say("Getting the prompt…")

        def done(future: Future[list[dict[str, Any]]]) -> None:
            if not self.winfo_exists():
                return
            self.insert_btn.configure(state="normal")
            try:
                self.inserted = presenter.insert(future.result())
            except Exception as exc:
                self._say(error_text(exc), "danger")
                return
            if self.on_inserted is not None:
                self.on_inserted(self.inserted)
            self.destroy()

        self.pump.run_in_worker(lambda: presenter.prompt_messages(server_id, prompt, values), done, name="mcp-prompt")
