"""Pieces of the MCP prompt and resource dialogs: `CompletingField`, an editable combo box
whose choices are the server's completions of what is typed (asked 300 ms after the last
keystroke, on a worker through the pump; an answer to an older prefix is dropped), and
`ServerPicker`, the read-only combo box of enabled servers.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from . import tkvars

if TYPE_CHECKING:
    from .pump import Pump

COMPLETE_DELAY_MS = 300


class CompletingField(tb.Combobox):
    """`complete(prefix, context)` (blocking, run on a worker) gives the choices for the typed
    text; `context()` (read on the UI thread when asking) gives the other fields' values."""

    def __init__(self, master: Any, pump: Pump, complete: Callable[[str, dict[str, str]], list[str]],
                 context: Callable[[], dict[str, str]] = dict, width: int = 40) -> None:
        self.var = tkvars.StringVar(master, "")
        super().__init__(master, textvariable=self.var, width=width)
        self.pump, self.complete, self.context = pump, complete, context
        self._job: str | None = None
        self._asked = ""
        self.completions: list[str] | None = None  # the last answer shown (None: none yet)
        self.problem = ""
        self.bind("<KeyRelease>", lambda e: self.changed() if e.keysym not in ("Up", "Down", "Return", "Tab") else None,
                  add=True)

    def changed(self) -> None:
        """The text changed: ask for completions once the typing pauses."""
        if self._job is not None:
            self.after_cancel(self._job)
        self._job = self.after(COMPLETE_DELAY_MS, self._ask)

    def _ask(self) -> None:
        self._job = None
        prefix = self._asked = self.var.get()
        complete, context = self.complete, self.context()

        def done(future: Future[list[str]]) -> None:
            if not self.winfo_exists() or prefix != self._asked:
                return
            try:
                values = future.result()
            except Exception as exc:
                self.problem = str(exc)
                return
            self.problem = ""
            self.completions = values
            self.configure(values=values)

        self.pump.run_in_worker(lambda: complete(prefix, context), done, name="mcp-complete")


class ServerPicker(tb.Combobox):
    """The enabled MCP servers by name; `chosen()` is the selected server's id."""

    def __init__(self, master: Any, servers: list[tuple[str, str]], on_pick: Callable[[str], None]) -> None:
        self.var = tkvars.StringVar(master, "")
        super().__init__(master, textvariable=self.var, values=[n for _i, n in servers], state="readonly", width=30)
        self.servers, self.on_pick = servers, on_pick
        self.bind("<<ComboboxSelected>>", lambda e: self._picked(on_pick), add=True)

    def pick(self, name: str) -> None:
        self.var.set(name)
        self._picked(self.on_pick)

    def chosen(self) -> str | None:
        return next((sid for sid, n in self.servers if n == self.var.get()), None)

    def _picked(self, on_pick: Callable[[str], None]) -> None:
        sid = self.chosen()
        if sid is not None:
            on_pick(sid)
