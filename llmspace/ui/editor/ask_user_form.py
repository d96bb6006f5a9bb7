"""The ask_user_question form of an assistant card: one block per question with its options
as check boxes and an "Other" entry; "Use answers" hands the answers as JSON to the card."""

from __future__ import annotations

import tkinter as tk
from collections.abc import Callable
from typing import Any

import orjson
import ttkbootstrap as tb

from .. import tkvars


class AskUserForm(tb.Frame):
    """ask_user_question: single/multi select + "Other"; `use` gets {"answers": {question: [labels]}}
    as indented JSON (the card writes it as the call's result)."""

    def __init__(self, master: Any, use: Callable[[str], None], questions: list[Any]) -> None:
        super().__init__(master)
        self.use = use
        self.fields: list[tuple[str, list[tuple[str, tk.BooleanVar]], tk.StringVar]] = []
        for q in questions:
            if not isinstance(q, dict):
                continue
            text = str(q.get("question", ""))
            tb.Label(self, text=text, font="TkHeadingFont").pack(anchor="w")
            opts: list[tuple[str, tk.BooleanVar]] = []
            for o in q.get("options", []) or []:
                label = str(o.get("label", o)) if isinstance(o, dict) else str(o)
                v = tkvars.BooleanVar(self, False)
                tb.Checkbutton(self, text=label, variable=v).pack(anchor="w", padx=12)
                opts.append((label, v))
            other = tkvars.StringVar(self, "")
            row = tb.Frame(self)
            row.pack(fill="x", padx=12)
            tb.Label(row, text="Other:").pack(side="left")
            tb.Entry(row, textvariable=other).pack(side="left", fill="x", expand=True)
            self.fields.append((text, opts, other))
        tb.Button(self, text="Use answers", bootstyle="primary-outline", command=self.submit).pack(anchor="w", pady=4)

    def answers(self) -> dict[str, Any]:
        out: dict[str, list[str]] = {}
        for text, opts, other in self.fields:
            chosen = [label for label, v in opts if v.get()]
            if other.get().strip():
                chosen.append(other.get().strip())
            out[text] = chosen
        return {"answers": out}

    def submit(self) -> None:
        text = orjson.dumps(self.answers(), option=orjson.OPT_INDENT_2).decode()
        self.use(text)
