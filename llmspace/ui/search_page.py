"""Settings › Search page: a form for `settings/search.json` (the web search tool's
provider, API keys as a key or `$ENV_NAME`, the SearXNG URL and the service addresses),
checked as you type, saved atomically with Save (here or at the bottom of the dialog).
An unreadable file is reported and left as it is (Reveal opens its folder). Logic in
`presenters/search_page.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ..errors import UserFacingError
from ..presenters.search_page import FIELDS, LABELS, SearchPagePresenter
from ..settings.search import PROVIDERS
from . import tkvars
from .reveal import reveal_path
from .wrapped_label import WrappedLabel

if TYPE_CHECKING:
    from ..paths import DataRoot
    from .services import UiServices


class SearchPage(tb.Frame):
    def __init__(self, master: Any, ui: UiServices, data_root: DataRoot) -> None:
        super().__init__(master, padding=10)
        self.ui = ui
        self.p = SearchPagePresenter(data_root)
        top = tb.Frame(self)
        top.pack(fill="x")
        tb.Button(top, text="Reveal", bootstyle="link", command=lambda: reveal_path(ui.errors, self.p.path)).pack(side="right")
        WrappedLabel(top, text=f"Web search settings · {self.p.path}", bootstyle="secondary").pack(  # a long path wraps
            side="left", fill="x", expand=True)
        self.vars: dict[str, Any] = {}
        self.inputs: dict[str, Any] = {}
        self.errors: dict[str, Any] = {}
        self.notes: dict[str, Any] = {}
        main = tb.Frame(self)
        main.pack(fill="x", pady=6)
        advanced = tb.Labelframe(self, text="Service addresses (for a proxy or a test server; empty = the public service)",
                                 padding=6)
        advanced.pack(fill="x", pady=6)
        for i, f in enumerate(FIELDS):
            parent = advanced if f.kind == "base-url" else main
            var = tkvars.StringVar(self, "")
            tb.Label(parent, text=f.label).grid(row=2 * i, column=0, sticky="w", padx=(0, 8))
            if f.kind == "choice":
                widget: Any = tb.Combobox(parent, values=[LABELS[p] for p in PROVIDERS], state="readonly", width=20)
                widget.bind("<<ComboboxSelected>>", lambda e: self._changed())
            else:
                widget = tb.Entry(parent, textvariable=var, width=50)
                var.trace_add("write", lambda *_a: self._changed())
            widget.grid(row=2 * i, column=1, sticky="w", pady=(4, 0))
            note = tb.Label(parent, text=self.p.default_base_url(f.key) if f.kind == "base-url" else "",
                            bootstyle="secondary")
            note.grid(row=2 * i, column=2, sticky="w", padx=8)
            error = tb.Label(parent, text="", bootstyle="danger")
            error.grid(row=2 * i + 1, column=1, columnspan=2, sticky="w")
            error.grid_remove()  # shown only while the field has a problem
            self.vars[f.key], self.inputs[f.key], self.notes[f.key], self.errors[f.key] = var, widget, note, error
        bar = tb.Frame(self)
        bar.pack(fill="x")
        self.save_button = tb.Button(bar, text="Save search settings", bootstyle="primary", command=self.save)
        self.save_button.pack(side="left")
        tb.Button(bar, text="Revert", bootstyle="link", command=self.load).pack(side="left", padx=6)
        self.status = tb.Label(self, text="", bootstyle="secondary", wraplength=880, justify="left")
        self.status.pack(anchor="w", pady=6)
        self.readable = False
        self.load()

    # -- values ------------------------------------------------------------------------------
    def values(self) -> dict[str, str]:
        out = {key: var.get() for key, var in self.vars.items()}
        label = self.inputs["provider"].get()
        out["provider"] = next((p for p in PROVIDERS if LABELS[p] == label), label)
        return out

    def set_value(self, key: str, value: str) -> None:
        """Put `value` into one field as typing would (the provider takes its name or label)."""
        if key == "provider":
            self.inputs[key].set(LABELS.get(value, value))
            self._changed()
        else:
            self.vars[key].set(value)

    def load(self) -> bool:
        try:
            values = self.p.load()
        except UserFacingError as exc:
            self.readable = False
            self.status.configure(text=f"{exc} Nothing here is saved until the file is fixed.", bootstyle="danger")
            for widget in (*self.inputs.values(), self.save_button):
                widget.configure(state="disabled")
            return False
        self.readable = True
        for key, widget in self.inputs.items():
            widget.configure(state="readonly" if key == "provider" else "normal")
        self.save_button.configure(state="normal")
        for key, value in values.items():
            if key != "provider":
                self.vars[key].set(value)
        self.inputs["provider"].set(LABELS.get(values["provider"], values["provider"]))
        self._changed()
        self.status.configure(text="", bootstyle="secondary")
        return True

    def _changed(self) -> None:
        values = self.values()
        errors = self.p.validate(values)
        for f in FIELDS:
            label = self.errors[f.key]
            label.configure(text=errors.get(f.key, ""))
            if f.key in errors:
                label.grid()
            else:
                label.grid_remove()
            if f.kind == "secret":
                text = values[f.key].strip()
                self.inputs[f.key].configure(show="" if not text or text.startswith("$") else "•")
                self.notes[f.key].configure(text=self.p.key_note(text))

    def changed(self) -> bool:
        return self.readable and self.p.changed(self.values())

    # -- saving ------------------------------------------------------------------------------
    def save(self) -> bool:
        if not self.readable:
            return False
        try:
            self.p.save(self.values())
        except UserFacingError as exc:
            self._changed()
            self.status.configure(text=str(exc), bootstyle="danger")
            return False
        self.status.configure(text="Saved.", bootstyle="success")
        return True
