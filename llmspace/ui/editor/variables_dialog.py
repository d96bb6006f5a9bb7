"""The Variables dialog: built-in variables (date format, working directory, skills), custom
text variables (name = value; add, change, delete) and JSON and file variables (add, change,
delete): a JSON value is checked as it is typed; a file is typed or chosen with a picker and
kept relative to the thread's working directory when it lies inside it. Save applies
everything in one undo step, in the thread's format (`presenters/variable_forms.py`).
"""

from __future__ import annotations

import tkinter as tk
from collections.abc import Callable
from typing import Any

import ttkbootstrap as tb

from ...core.templating.references import is_referenced
from ...errors import UserFacingError, error_text
from ...presenters.editor import EditorPresenter
from ...presenters.variable_forms import json_status, relative_path, variable_data, working_directory
from .. import tkvars
from ..theme import style_listbox

VALUE_KINDS = ("json", "file")


class ValueRow(tb.Frame):
    """One JSON or file variable: its name (typed for a new one), the value editor and ✕.
    `original` is the stored name (None for a row added in this dialog)."""

    def __init__(self, master: Any, dialog: VariablesDialog, kind: str, name: str, value: str,
                 original: str | None) -> None:
        super().__init__(master)
        self.dialog, self.kind, self.original = dialog, kind, original
        self.removed = False
        self.name_var = tkvars.StringVar(self, name)
        head = tb.Frame(self)
        head.pack(fill="x")
        if original is None:
            tb.Entry(head, textvariable=self.name_var, width=18).pack(side="left")
        else:
            tb.Label(head, text=name, width=18).pack(side="left")
        tb.Label(head, text="JSON" if kind == "json" else "File content", bootstyle="secondary").pack(side="left", padx=6)
        tb.Button(head, text="✕", bootstyle="secondary-link", width=2, command=self.remove).pack(side="right")
        self.status: Any = None
        if kind == "json":
            self.text = tb.Text(self, height=4, width=50, wrap="none", font="TkFixedFont", undo=True)
            self.text.insert("1.0", value)
            self.text.edit_modified(False)
            self.text.pack(fill="x", pady=(2, 0))
            self.status = tb.Label(self, text="", bootstyle="secondary")
            self.status.pack(anchor="w")
            self.text.bind("<<Modified>>", self._on_json_modified, add=True)
            self.check()
        else:
            row = tb.Frame(self)
            row.pack(fill="x", pady=(2, 0))
            self.path_var = tkvars.StringVar(self, value)
            tb.Button(row, text="Browse…", bootstyle="secondary-outline", command=self.browse).pack(side="right")
            tb.Entry(row, textvariable=self.path_var).pack(side="left", fill="x", expand=True, padx=(0, 6))

    def value(self) -> str:
        return str(self.text.get("1.0", "end-1c")) if self.kind == "json" else str(self.path_var.get()).strip()

    def name(self) -> str:
        return str(self.name_var.get()).strip()

    def _on_json_modified(self, _e: Any = None) -> None:
        if self.text.edit_modified():
            self.text.edit_modified(False)
            self.check()

    def check(self) -> bool:
        """Show whether the JSON is valid (and where it is not); True when it is."""
        ok, message = json_status(self.value())
        self.status.configure(text=message.replace("{{name}}", "{{" + (self.name() or "name") + "}}"),
                              bootstyle="success" if ok and self.value().strip() else ("secondary" if ok else "danger"))
        return ok

    def browse(self) -> str | None:
        """Pick the file; inside the working directory it is kept as a relative path."""
        path = self.dialog.pick_file()
        if path:
            self.path_var.set(relative_path(path, working_directory(self.dialog.p.thread)))
        return path

    def remove(self) -> None:
        if self.original is not None and is_referenced(self.dialog.p.thread, self.original):
            if not self.dialog.confirm(f"{{{{{self.original}}}}} is still used in this thread. Delete the variable anyway?"):
                return
        self.removed = True
        self.pack_forget()


SKILL_ROWS = 5  # rows of the skills list before it scrolls


class VariablesDialog(tb.Toplevel):
    """Typed variables (date format, working directory, skills), custom text variables and
    JSON and file variables."""

    DATE_FORMATS = ("readable-date", "iso-date", "local-date-time")

    def __init__(self, master: Any, p: EditorPresenter, on_done: Callable[[], None],
                 skill_names: Callable[[], list[str]] | None = None, dialogs: Any = None) -> None:
        super().__init__(title="Variables", master=master, size=(760, 600))
        self.bind("<Escape>", lambda e: self.destroy())
        self.p, self.on_done, self.dialogs = p, on_done, dialogs
        self.skill_boxes: dict[str, tuple[Any, tk.Listbox, tk.Variable, list[str]]] = {}
        self.skill_bars: dict[str, tb.Scrollbar] = {}  # a skills list longer than it shows scrolls
        self.typed_fields: dict[str, tuple[Any, tk.Variable]] = {}
        self.value_rows: list[ValueRow] = []
        self.entries: list[tuple[tk.StringVar, tk.Text]] = []
        bar = tb.Frame(self, padding=8)
        bar.pack(fill="x", side="bottom")  # buttons never pushed out
        self.msg = tb.Label(bar, text="", bootstyle="danger", wraplength=420)
        self.msg.pack(side="left")
        tb.Button(bar, text="Cancel", bootstyle="secondary", command=self.destroy).pack(side="right")
        tb.Button(bar, text="Save", bootstyle="primary", command=self.save).pack(side="right", padx=6)
        f = self.body = tb.ScrolledFrame(self, auto_hide=True, padding=8)
        f.pack(fill="both", expand=True)
        typed = p.typed_variables()
        self._builtin_box(f, {n: v for n, v in typed.items() if v.type not in VALUE_KINDS}, skill_names)
        tb.Label(f, text="Text variables", font="TkHeadingFont").pack(anchor="w", pady=(8, 0))
        values = p.custom_variables()
        for name, kind in p.variable_hints().items():
            if kind == "missing" and name not in typed:
                values.setdefault(name, "")
        self.rows = tb.Frame(f)
        self.rows.pack(fill="x", pady=6)
        self.empty_lbl = tb.Label(self.rows, bootstyle="secondary", wraplength=600, justify="left",
                                  text="No text variables yet. Write {{name}} in the system prompt or a message, "
                                       "or click Add variable, then give it a value here.")
        if not values:
            self.empty_lbl.pack(anchor="w")
        for n, v in values.items():
            self.add_row(n, v)
        tb.Label(f, text="JSON and file variables", font="TkHeadingFont").pack(anchor="w", pady=(8, 0))
        self.value_box = tb.Frame(f)
        self.value_box.pack(fill="x", pady=6)
        for name, v in typed.items():
            if v.type in VALUE_KINDS:
                self.add_value_row(v.type, name, v.value or "", original=name)
        adds = tb.Frame(f)
        adds.pack(anchor="w")
        tb.Button(adds, text="Add variable", bootstyle="link", command=lambda: self.add_row("", "")).pack(side="left")
        tb.Button(adds, text="Add JSON variable", bootstyle="link",
                  command=lambda: self.add_value_row("json", "", "")).pack(side="left")
        tb.Button(adds, text="Add file variable", bootstyle="link",
                  command=lambda: self.add_value_row("file", "", "")).pack(side="left")

    def _builtin_box(self, f: Any, typed: dict[str, Any], skill_names: Callable[[], list[str]] | None) -> None:
        if not typed:
            return
        box = tb.Labelframe(f, text="Built-in variables", padding=6)
        box.pack(fill="x")
        for i, (name, v) in enumerate(typed.items()):
            tb.Label(box, text=name).grid(row=i, column=0, sticky="w")
            tb.Label(box, text=v.type, bootstyle="secondary").grid(row=i, column=1, sticky="w", padx=6)
            if v.type == "currentDate":
                var: tk.Variable = tkvars.StringVar(self, v.format or "readable-date")
                tb.Combobox(box, values=list(self.DATE_FORMATS), textvariable=var, state="readonly", width=20).grid(row=i, column=2, sticky="w")
            elif v.type == "skills":
                self._skills_cell(box, i, name, v, skill_names)
                continue
            else:
                var = tkvars.StringVar(self, v.value or "")
                tb.Entry(box, textvariable=var, width=40).grid(row=i, column=2, sticky="w")
            self.typed_fields[name] = (v, var)

    def _skills_cell(self, box: Any, i: int, name: str, v: Any, skill_names: Callable[[], list[str]] | None) -> None:
        try:
            names = list(skill_names()) if skill_names is not None else []
        except Exception:
            names = []
        cell = tb.Frame(box)
        cell.grid(row=i, column=2, sticky="w")
        chosen = [str(n) for n in (v.skillNames or [])]
        all_var = tkvars.BooleanVar(self, bool(v.includeAll) or (v.includeAll is None and not chosen))
        tb.Checkbutton(cell, text="All enabled skills", variable=all_var).pack(anchor="w")
        shown = min(SKILL_ROWS, max(1, len(names)))
        holder = tb.Frame(cell)
        lb = style_listbox(tk.Listbox(holder, selectmode="multiple", height=shown, exportselection=False))
        for k, n in enumerate(names):
            lb.insert("end", n)
            if n in chosen:
                lb.selection_set(k)
                lb.see(k)
        if names:
            holder.pack(anchor="w")
            lb.pack(side="left")
        if len(names) > shown:
            bar = tb.Scrollbar(holder, orient="vertical", command=lb.yview)
            lb.configure(yscrollcommand=bar.set)
            bar.pack(side="left", fill="y")
            self.skill_bars[name] = bar
        self.skill_boxes[name] = (v, lb, all_var, names)

    # -- rows ------------------------------------------------------------------------------
    def add_row(self, name: str, value: str) -> None:
        """A text variable row (name = value)."""
        self.empty_lbl.pack_forget()
        row = tb.Frame(self.rows)
        row.pack(fill="x", pady=2)
        nv = tkvars.StringVar(self, name)
        tb.Entry(row, textvariable=nv, width=18).pack(side="left", anchor="n")
        t = tb.Text(row, height=2, width=40, wrap="word")
        t.insert("1.0", value)
        t.pack(side="left", fill="x", expand=True, padx=6)
        self.entries.append((nv, t))

    def add_value_row(self, kind: str, name: str, value: str, original: str | None = None) -> ValueRow:
        """A JSON or file variable row (`original`: the stored name of an existing one)."""
        row = ValueRow(self.value_box, self, kind, name, value, original)
        row.pack(fill="x", pady=4)
        self.value_rows.append(row)
        return row

    # -- what the rows need from the window ------------------------------------------------------
    def pick_file(self) -> str | None:
        if self.dialogs is None:
            return None
        return self.dialogs.open_file("Choose the variable's file", (("All files", "*"),))

    def confirm(self, message: str) -> bool:
        return True if self.dialogs is None else bool(self.dialogs.confirm(message, "Delete variable"))

    # -- save --------------------------------------------------------------------------------
    def _typed_changes(self) -> tuple[dict[str, dict[str, Any]], set[str]]:
        typed: dict[str, dict[str, Any]] = {}
        removed: set[str] = set()
        for name, (v, var) in self.typed_fields.items():
            data = v.model_dump(exclude_unset=True, by_alias=True)
            data["format" if v.type == "currentDate" else "value"] = var.get()
            typed[name] = data
        for name, (v, lb, all_var, names) in self.skill_boxes.items():
            data = v.model_dump(exclude_unset=True, by_alias=True)
            picked = [names[k] for k in lb.curselection()]
            chosen = [str(n) for n in (v.skillNames or [])]
            was_all = bool(v.includeAll) or (v.includeAll is None and not chosen)
            if bool(all_var.get()) == was_all and (was_all or picked == [n for n in chosen if n in names]):
                continue  # untouched
            if all_var.get():
                data["includeAll"] = True
                data.setdefault("skillNames", [])
            else:
                data["includeAll"] = False
                data["skillNames"] = picked
            typed[name] = data
        current = self.p.typed_variables()
        for row in self.value_rows:
            if row.removed:
                if row.original is not None:
                    removed.add(row.original)
                continue
            name = row.original or row.name()
            if not name:
                if row.value().strip():
                    kind = "JSON" if row.kind == "json" else "file"
                    raise UserFacingError(f"Give the new {kind} variable a name.")
                continue  # an empty row added by mistake
            old = current.get(row.original) if row.original else None
            data = old.model_dump(exclude_unset=True, by_alias=True) if old is not None else variable_data(row.kind, "")
            data["value"] = row.value()
            typed[name] = data
        return typed, removed

    def save(self) -> bool:
        custom: dict[str, str] = {}
        for nv, t in self.entries:
            name = nv.get().strip()
            if name:
                custom[name] = t.get("1.0", "end-1c")
        try:
            typed, removed = self._typed_changes()
            self.p.save_variables(typed, removed, custom)
        except UserFacingError as exc:
            self.msg.configure(text=error_text(exc))
            return False
        self.on_done()
        self.destroy()
        return True
