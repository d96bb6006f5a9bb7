"""Insert MCP prompt…: pick a server and one of its prompts, fill its arguments (each offers
the server's completions as you type, `ui/mcp_completion.py`), and Insert: the prompt's
messages are appended to the thread as the server returned them, literally (never rendered
as a template) and marked as coming from the server. Listing, completing and getting the
prompt run on workers (results via the pump); logic in `presenters/mcp_content.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ..presenters.mcp_content import McpContentPresenter, PromptInfo
from .mcp_pick_dialog import McpPickDialog

if TYPE_CHECKING:
    from .pump import Pump


class McpPromptDialog(McpPickDialog[PromptInfo]):
    kind = "prompt"

    def __init__(self, master: Any, pump: Pump, presenter: McpContentPresenter,
                 on_inserted: Callable[[list[str]], None] | None = None) -> None:
        self.on_inserted = on_inserted
        self.inserted: list[str] = []
        super().__init__(master, pump, presenter, title="Insert MCP prompt", heading="Prompt", action="Insert",
                         act=self.insert, height=6, fields_label="Arguments",
                         note="The server's messages are inserted as written: {{…}} in them is never rendered.")

    def _list(self, server_id: str) -> list[PromptInfo]:
        return self.p.prompts(server_id)

    def _fill(self, prompt: PromptInfo) -> None:
        if not prompt.arguments:
            tb.Label(self.fields_box, text="This prompt takes no arguments.", bootstyle="secondary").pack(anchor="w")
        for arg in prompt.arguments:
            self.add_field(prompt, arg.name, arg.name + (" *" if arg.required else ""))
            if arg.description:
                tb.Label(self.fields_box, text=arg.description, bootstyle="secondary", wraplength=480).pack(anchor="w")

    def _complete(self, server_id: str, prompt: PromptInfo, name: str, prefix: str,
                  others: dict[str, str]) -> list[str]:
        return self.p.complete_prompt(server_id, prompt.name, name, prefix, others)

    def insert(self) -> None:
        """Get the prompt with the arguments (in a worker) and append its messages to the thread."""
        prompt, server_id = self.chosen(), self.server_id
        if prompt is None or server_id is None:
            return
        values, presenter = self.values(), self.p
        self._say("Getting the prompt…")

        def take(messages: list[dict[str, Any]]) -> None:
            self.inserted = presenter.insert(messages)

        def then() -> None:
            if self.on_inserted is not None:
                self.on_inserted(self.inserted)

        self.run_action(lambda: presenter.prompt_messages(server_id, prompt, values), take, then, "mcp-prompt")
