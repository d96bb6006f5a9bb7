"""The "Connect Langfuse…" / "Connect Phoenix…" form of the Traces panel.

Fields: a name, the server URL, and for Langfuse the public and secret keys, for Phoenix the
project and an optional API key; keys are masked entries. Connect checks the form
(`presenters.trace_connect.ConnectForm.problem`), then asks the back-end on a worker (the
result comes back through the pump); a failure is shown in the form, saying which of key,
project, URL or network is wrong and marking those fields, and nothing typed is cleared.
Enter connects, Escape (or Cancel) closes; every control is reached by Tab.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ..presenters.trace_connect import DEFAULT_URLS, ConnectForm, FormError, connect, form_error
from .wrapped_label import WrappedLabel

if TYPE_CHECKING:
    from .services import UiServices

LABELS = {"name": "Name (optional)", "url": "Server URL", "public_key": "Public key (pk-lf-…)",
          "secret_key": "Secret key (sk-lf-…)", "project": "Phoenix project", "api_key": "API key (when auth is on)"}
MASKED = ("secret_key", "api_key")
NOTES = {
    "langfuse": "The keys are in the Langfuse project's Settings › API Keys. The secret key is kept in the "
                "app's secret store, never in the project's files.",
    "phoenix": "The API key is needed only when the Phoenix server has authentication on; it is kept in "
               "the app's secret store.",
}


class ConnectDialog(tb.Toplevel):
    """One connect form; `on_connected(project)` runs once the back-end answered and the project is made."""

    def __init__(self, ui: UiServices, store: Any, kind: str,
                 on_connected: Callable[[dict[str, Any]], object], *,
                 timeout: tuple[float, float] | None = None) -> None:
        self.form = ConnectForm(kind)
        super().__init__(title=f"Connect {self.form.label}", master=ui.root)
        self.ui, self.store, self.on_connected, self.timeout = ui, store, on_connected, timeout
        self.working = False
        self.closed = False
        body = tb.Frame(self, padding=16)
        body.pack(fill="both", expand=True)
        body.columnconfigure(1, weight=1)
        self.entries: dict[str, tb.Entry] = {}
        for row, name in enumerate(self.form.fields()):
            tb.Label(body, text=LABELS[name]).grid(row=row, column=0, sticky="w", padx=(0, 8), pady=3)
            entry = tb.Entry(body, width=44, show="•" if name in MASKED else "")
            entry.grid(row=row, column=1, sticky="ew", pady=3)
            entry.bind("<Return>", lambda e: self.submit())
            self.entries[name] = entry
        self.entries["url"].insert(0, DEFAULT_URLS[kind])
        if kind == "phoenix":
            self.entries["project"].insert(0, self.form.project)
        end = len(self.entries)
        WrappedLabel(body, text=NOTES[kind], bootstyle="secondary").grid(row=end, column=0, columnspan=2, sticky="ew",
                                                                           pady=(8, 4))
        self.message = WrappedLabel(body, text="", bootstyle="danger")
        self.message.grid(row=end + 1, column=0, columnspan=2, sticky="ew")
        bar = tb.Frame(body)
        bar.grid(row=end + 2, column=0, columnspan=2, sticky="e", pady=(10, 0))
        self.connect_btn = tb.Button(bar, text="Connect", bootstyle="primary", command=self.submit)
        self.connect_btn.pack(side="right")
        self.cancel_btn = tb.Button(bar, text="Cancel", bootstyle="secondary", command=self.close)
        self.cancel_btn.pack(side="right", padx=(0, 6))
        self.bind("<Escape>", lambda e: self.close())
        self.protocol("WM_DELETE_WINDOW", self.close)
        if str(ui.root.winfo_viewable()) == "1":
            self.transient(ui.root)
        self.entries["name"].focus_set()

    def read(self) -> ConnectForm:
        """The form as typed (the entries are never cleared)."""
        for name, entry in self.entries.items():
            setattr(self.form, name, entry.get())
        return self.form

    def show_error(self, problem: FormError) -> None:
        self.message.set_text(problem.text)
        for name, entry in self.entries.items():
            entry.configure(bootstyle="danger" if name in problem.fields else "default")
        if problem.fields:
            self.entries[problem.fields[0]].focus_set()

    def submit(self) -> bool:
        """Connect: check the form, then the back-end on a worker. True when a check started."""
        if self.working:
            return False
        form = self.read()
        problem = form.problem()
        if problem is not None:
            self.show_error(problem)
            return False
        self.working = True
        self.connect_btn.configure(state="disabled")
        self.message.set_text("")
        for entry in self.entries.values():
            entry.configure(bootstyle="default")
        self.ui.status.set(f"Checking the connection to {form.label}…")
        snapshot = ConnectForm(**vars(form))
        self.ui.pump.run_in_worker(lambda: connect(self.store, snapshot, timeout=self.timeout), self._done,
                                   name="trace-connect")
        return True

    def _done(self, future: Future[dict[str, Any]]) -> None:
        self.working = False
        try:
            project = future.result()
        except Exception as exc:  # every failure is shown in the form, the typing kept
            if self.closed:
                return
            problem = form_error(exc, self.form.kind)
            self.ui.status.set(problem.text.splitlines()[0])
            self.connect_btn.configure(state="normal")
            self.show_error(problem)
            return
        self.on_connected(project)
        self.close()

    def close(self) -> None:
        """Close the form; a check in flight still makes its project when it succeeds (listed then)."""
        if self.closed:
            return
        self.closed = True
        self.destroy()
