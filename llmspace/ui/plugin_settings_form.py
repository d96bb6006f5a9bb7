"""The Settings tab of one plugin: a form generated from its `config.schema.json`
(llmspace/plugins/settings_form.py) that saves as you type.

Every field type of the plugin guide's §5.1: text entries (secrets masked), numbers and
integers, switches for booleans, read-only combo boxes for enums (titled enums show their
titles), nested objects as groups, arrays of primitives as editable lists (check boxes when
their items have fixed values), and what a value must look like (format, minimum, maximum)
under its field. Titles, descriptions and required marks (`*`) are shown; a value that does not validate shows its message under the field
and is not saved. A form taller than its tab scrolls (`ui/scroll_column.py`). Edits are
saved 600 ms after the last keystroke, off the UI thread, through
`PluginsPagePresenter.save_setting` (which reloads the plugin).

The field widgets are `SchemaFields`, a mixin that any form over a `FormField` list uses
(the MCP elicitation dialog, `ui/mcp_elicitation.py`): it reads each field's starting value
from `field_value(f)` and reports every edit to `_changed(f, value, now=…, as_list=…)`.
"""

from __future__ import annotations

import tkinter as tk
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ..plugins.settings_form import FormField
from ..presenters.plugins_page import FormView, PluginsPagePresenter
from . import tkvars
from .scroll_column import ScrollColumn
from .theme import style_listbox

if TYPE_CHECKING:
    from .pump import Pump

SAVE_DELAY_MS = 600
FORM_HEIGHT = 240  # px the form asks for; taller forms scroll


class SchemaFields:
    """Widgets for `FormField`s; the form says where values come from and go (see the docstring)."""

    errors: dict[str, tb.Label]
    inputs: dict[str, Any]

    def field_value(self, f: FormField) -> Any:
        raise NotImplementedError

    def _changed(self, f: FormField, value: Any, *, now: bool = False, as_list: list[str] | None = None) -> None:
        raise NotImplementedError

    def _field(self, parent: Any, f: FormField) -> None:
        label = f.label + (" *" if f.required else "")
        if f.type == "object":
            group = tb.Labelframe(parent, text=label, padding=6)
            group.pack(fill="x", pady=4)
            if f.description:
                tb.Label(group, text=f.description, bootstyle="secondary", wraplength=480).pack(anchor="w")
            for child in f.children:
                self._field(group, child)
            return
        row = tb.Frame(parent)
        row.pack(fill="x", pady=3)
        value = self.field_value(f)
        if f.type == "boolean":
            flag = tkvars.BooleanVar(row, bool(value))
            tb.Checkbutton(row, text=label, variable=flag, bootstyle="round-toggle",
                           command=lambda: self._changed(f, flag.get(), now=True)).pack(anchor="w")
            self.inputs[f.key] = flag
        else:
            tb.Label(row, text=label).pack(anchor="w")
            options = self._field_options(f)
            if options and f.type != "array":
                shown = next((t for v, t in options if v == value or str(v) == str(value)), "")
                choice = tkvars.StringVar(row, shown)
                box = tb.Combobox(row, values=[t for _v, t in options], textvariable=choice, state="readonly", width=36)
                box.pack(anchor="w")
                box.bind("<<ComboboxSelected>>",
                         lambda e: self._changed(f, self._enum_value(f, choice.get()), now=True))
                self.inputs[f.key] = choice
            elif options:
                self._multi(row, f, options, list(value) if isinstance(value, list) else [])
            elif f.type == "array":
                self._list(row, f, list(value) if isinstance(value, list) else [])
            else:
                text = "" if value is None else str(value)
                var = tkvars.StringVar(row, text)
                entry = tb.Entry(row, textvariable=var, width=48, show="•" if f.secret else "")
                entry.pack(anchor="w")
                var.trace_add("write", lambda *_: self._changed(f, var.get()))
                self.inputs[f.key] = var
        if f.description:
            tb.Label(row, text=f.description, bootstyle="secondary", wraplength=480).pack(anchor="w")
        if f.hint:
            tb.Label(row, text=f"Enter {f.hint}.", bootstyle="secondary", wraplength=480).pack(anchor="w")
        err = tb.Label(row, text="", bootstyle="danger", wraplength=480)
        err.pack(anchor="w")
        self.errors[f.key] = err

    def _list(self, row: Any, f: FormField, items: list[Any]) -> None:
        frame = tb.Frame(row)
        frame.pack(anchor="w", fill="x")
        box = style_listbox(tk.Listbox(frame, height=min(6, max(2, len(items))), width=40, exportselection=False))
        box.pack(side="left")
        for item in items:
            box.insert("end", str(item))
        side = tb.Frame(frame)
        side.pack(side="left", padx=6)
        new = tkvars.StringVar(side, "")
        entry = tb.Entry(side, textvariable=new, width=20)
        entry.pack(anchor="w")

        def current() -> list[str]:
            return [str(box.get(i)) for i in range(box.size())]

        def add() -> None:
            if new.get().strip():
                box.insert("end", new.get().strip())
                new.set("")
                self._changed(f, ",".join(current()), now=True, as_list=current())

        def remove() -> None:
            for i in reversed(box.curselection()):
                box.delete(i)
            self._changed(f, ",".join(current()), now=True, as_list=current())

        entry.bind("<Return>", lambda e: add())
        tb.Button(side, text="Add", bootstyle="link", command=add).pack(anchor="w")
        tb.Button(side, text="Remove selected", bootstyle="danger-link", command=remove).pack(anchor="w")
        self.inputs[f.key] = box

    def _multi(self, row: Any, f: FormField, options: list[tuple[Any, str]], picked: list[Any]) -> None:
        """A multi-select array: one check box per fixed value."""
        flags: list[tuple[Any, tk.BooleanVar]] = []

        def changed() -> None:
            self._changed(f, [v for v, flag in flags if flag.get()], now=True)

        for v, title in options:
            flag = tkvars.BooleanVar(row, v in picked)
            tb.Checkbutton(row, text=title, variable=flag, command=changed).pack(anchor="w", padx=12)
            flags.append((v, flag))
        self.inputs[f.key] = flags

    @staticmethod
    def _field_options(f: FormField) -> list[tuple[Any, str]]:
        if f.choices:
            return list(f.choices)
        return [(v, str(v)) for v in f.enum] if f.enum is not None and f.type != "array" else []

    @classmethod
    def _enum_value(cls, f: FormField, text: str) -> Any:
        return next((v for v, t in cls._field_options(f) if t == text), text)


class PluginSettingsForm(SchemaFields, tb.Frame):
    def __init__(self, master: Any, pump: Pump, presenter: PluginsPagePresenter, name: str,
                 on_saved: Callable[[], None] | None = None) -> None:
        super().__init__(master, padding=8)
        self.pump, self.p, self.name, self.on_saved = pump, presenter, name, on_saved
        self.errors: dict[str, tb.Label] = {}
        self.inputs: dict[str, Any] = {}
        self._jobs: dict[str, str] = {}
        self.status = tb.Label(self, text="", bootstyle="secondary")
        self.status.pack(anchor="w")
        # a long form scrolls (the wheel too) instead of being cut off at the dialog's edge
        self.column = ScrollColumn(self, height=FORM_HEIGHT)
        self.column.pack(fill="both", expand=True)
        self.body = self.column.body
        self.view = presenter.form(name)
        self._build()

    # -- building ------------------------------------------------------------------------
    def _build(self) -> None:
        if self.view.form is None:
            tb.Label(self.body, text=self.view.error, bootstyle="secondary", wraplength=520).pack(anchor="w")
            return
        if self.view.form.description:
            tb.Label(self.body, text=self.view.form.description, wraplength=520).pack(anchor="w", pady=(0, 6))
        for f in self.view.form.fields:
            self._field(self.body, f)
        self._show_problems(self.view)

    def field_value(self, f: FormField) -> Any:
        return self.view.value(f)

    # -- saving ----------------------------------------------------------------------------
    def _changed(self, f: FormField, value: Any, *, now: bool = False, as_list: list[str] | None = None) -> None:
        if as_list is not None and f.item_type is not None and f.item_type != "string":
            value = ",".join(as_list)  # converted by the field's item type
        elif as_list is not None:
            value = as_list
        job = self._jobs.pop(f.key, None)
        if job is not None:
            self.after_cancel(job)
        self.status.configure(text="Editing…", bootstyle="secondary")
        if now:
            self._save(f, value)
        else:
            self._jobs[f.key] = self.after(SAVE_DELAY_MS, lambda: self._save(f, value))

    def _save(self, f: FormField, value: Any) -> None:
        self._jobs.pop(f.key, None)
        self.status.configure(text="Saving…", bootstyle="secondary")
        presenter, name = self.p, self.name

        def done(future: Future[FormView]) -> None:
            if not self.winfo_exists():
                return
            try:
                view = future.result()
            except Exception as exc:
                self.status.configure(text=str(exc), bootstyle="danger")
                return
            self._show_problems(view)
            if not view.problems:
                self.status.configure(text="Saved; the plugin was reloaded.", bootstyle="success")
                if self.on_saved is not None:
                    self.on_saved()
            else:
                self.status.configure(text="Not saved: fix the marked fields.", bootstyle="danger")

        self.pump.run_in_worker(lambda: presenter.save_setting(name, f.key, value), done,
                                       name="plugin-settings")

    def _show_problems(self, view: FormView) -> None:
        for key, label in self.errors.items():
            label.configure(text=view.problems.get(key, ""))
        if "" in view.problems:
            self.status.configure(text=view.problems[""], bootstyle="danger")

    def pending(self) -> bool:
        """True while an edit waits for its debounced save."""
        return bool(self._jobs)
