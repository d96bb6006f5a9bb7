"""Message cards for the rich message list: a user card (text, image thumbnails) and an
assistant card (collapsible thinking, text, tool calls with arguments and editable results
with their images, the ask_user_question form, the todo_write list, a usage/timing line). The
head row — drag handle, toggle, role, the usage/timing line and the action buttons — is
`card_header.CardHeader`, which keeps every button inside the card at any width; dragging the
handle or the header reorders (`drag.py`). Every text box has `{{var}}` highlighting,
`{{` completion and value tooltips (`text_assist.py`); pictures are `card_images.ImageStrip`.
An assistant reply shows as Markdown (`markdown_text.MarkdownText`) while View › Render
Markdown is on, until its Edit button shows the raw text; Copy copies the raw Markdown.
Tool calls show as the original app shows them (`tool_views.py`): todo checklists, web
search hits, pretty JSON folded when long; a shaped result's Edit shows the raw result.
A card reports edits to
the `EditorPresenter` and receives streamed text through `append_text`/`append_thinking`.
Cards are built with the editor's `CardServices` and their list (seen through `CardList`).
"""

from __future__ import annotations

import base64
import os
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import orjson
import ttkbootstrap as tb

from ...core.model import ImageDataContent
from ...core.templating.places import message_place, tool_result_place
from ...core.templating.render import is_trusted_message, is_trusted_tool_result
from ...core.usage import in_out_label
from ...errors import UserFacingError
from ...presenters.catalog import tool_label
from ...presenters.mcp_content import from_server
from ...presenters.tool_results import shape_result, todo_items
from ...presenters.view_updates import MessagesChanged
from .. import tkvars
from ..reveal import confirm_open, copy_text
from .ask_user_form import AskUserForm
from .card_header import CardHeader
from .card_images import ImageStrip
from .card_services import CardList, CardServices
from .markdown_text import MarkdownText, warm_up
from .text_assist import TextAssist
from .text_fit import fit, grow, guess_lines, linespace, show_top, top_line
from .tool_views import Checklist, FoldedJson, SearchResults

if TYPE_CHECKING:
    pass

MAX_LINES = 800  # a message's text box holds this many lines (of its font) before it scrolls: see text_fit.py
RESULT_LINES = 18  # a tool result's box scrolls past this many lines


def text_height(text: str, width_chars: int = 90) -> int:
    """The lines a message's text needs before its box is shown (then `fit` measures it)."""
    return guess_lines(text, width_chars, MAX_LINES)


def usage_line(msg: Any) -> str:
    parts = []
    u = getattr(msg, "usage", None)
    if u is not None and (u.totalTokens or u.input or u.output):
        total = u.totalTokens or (u.input + u.output)
        parts.append(f"{int(total):,} tokens · {in_out_label(u)}")
        if u.cost and u.cost.total:
            c = float(u.cost.total)
            parts.append(f"${c:.2f}" if c >= 1 else (f"${c:.4f}" if c >= 0.01 else f"${c:.6f}"))
    t = getattr(msg, "timing", None)
    if t is not None and t.durationMs:
        d = float(t.durationMs)
        parts.append(f"{d:.0f} ms" if d < 1000 else (f"{d / 1000:.2f} s" if d < 10000 else f"{d / 1000:.1f} s"))
        if u is not None and u.output and t.firstTokenMs is not None and d > t.firstTokenMs:
            parts.append(f"{u.output / ((d - t.firstTokenMs) / 1000):.1f} tok/s")
    return " · ".join(parts)


def _and_break(fn: Callable[[], object]) -> Callable[[Any], str]:
    """A key binding that runs `fn` and stops Tk's own handling (no newline typed)."""

    def handler(_e: Any) -> str:
        fn()
        return "break"

    return handler


class MessageCard(tb.Frame):
    """One message; `index` is its position in the thread."""

    def __init__(self, master: Any, services: CardServices, cards: CardList, index: int, msg: Any) -> None:
        super().__init__(master, padding=(6, 4), bootstyle="default")
        self.services, self.list, self.index, self.msg = services, cards, index, msg
        self.ui, self.run = services.ui, services.run
        self.p = services.presenter
        self.text: tb.Text | None = None
        self.thinking: tb.Text | None = None
        self.results: dict[str, tb.Text] = {}
        self.result_assists: dict[str, TextAssist] = {}
        self.text_assist: TextAssist | None = None
        self.images: ImageStrip | None = None
        self.markdown: MarkdownText | None = None  # the reply drawn as Markdown (else raw text)
        self.edit_btn: tb.Button | None = None
        self.slack_px = 0  # blank px at the bottom of a streaming reply's box (`append_text`)
        self.shaped: dict[str, Any] = {}  # call id → its read-only result view (tool_views)
        ro = self.p.read_only
        rendered = msg.role == "assistant" and cards.markdown and msg.id not in cards.raw
        head = self.header = CardHeader(self, cards.request_layout)
        head.pack(fill="x")
        collapsed = msg.id in self.p.collapsed
        self.handle = tb.Label(head, text="⠿", cursor="fleur" if not ro else "", padding=(2, 2), bootstyle="secondary")
        self.handle.tooltip = "Drag to move"  # type: ignore[attr-defined]
        head.left.append(self.handle)
        cards.drag.bind(self.handle, self)
        cards.drag.bind(head, self)
        head.left.append(tb.Button(head, text="▸" if collapsed else "▾", width=2, bootstyle="secondary-link",
                                   padding=(4, 2), command=lambda: self.p.message_intents.toggle_collapsed(msg.id)))
        self.role_btn = tb.Button(head, text=msg.role.capitalize(), width=9,
                                  bootstyle="info-outline" if msg.role == "user" else "success-outline",
                                  command=lambda: self._do(self.p.message_intents.toggle_role, index))
        head.left.append(self.role_btn)
        self.stats: tb.Label | None = None
        if msg.role == "assistant" and (line := usage_line(msg)):
            self.stats = head.stats = tb.Label(head, text=line, bootstyle="secondary", justify="left")
        if msg.role == "user":
            head.actions.append(tb.Button(head, text="Image…", bootstyle="secondary-link", padding=(6, 2),
                                          command=self.pick_image, state="disabled" if ro else "normal"))
            head.actions.append(tb.Button(head, text="Paste image", bootstyle="secondary-link", padding=(6, 2),
                                          command=self.paste_image, state="disabled" if ro else "normal"))
            if services.mcp_resource is not None and services.mcp_resource.available():
                attach = services.mcp_resource
                self.mcp_btn = tb.Button(head, text="MCP…", bootstyle="secondary-link", padding=(4, 2),
                                         command=lambda: attach(msg.id), state="disabled" if ro else "normal")
                self.mcp_btn.tooltip = "Attach MCP resource…: a server's text or image"  # type: ignore[attr-defined]
                head.actions.append(self.mcp_btn)
        self.regen_btn: tb.Button | None = None
        if msg.role == "assistant" and index == len(self.p.messages) - 1:
            regen = self.regen_btn = tb.Button(head, text="↻ Regenerate", bootstyle="secondary-link", padding=(6, 2),
                                               command=self.run.regenerate,
                                               state="normal" if self.run.can_regenerate() else "disabled")
            regen.tooltip = "Run again from the user message before this reply (Ctrl+R)"  # type: ignore[attr-defined]
            regen.compact_text = "↻"  # type: ignore[attr-defined]  # in a narrow card (card_header.py)
            head.actions.append(regen)
        if msg.role == "assistant":
            copy = tb.Button(head, text="Copy", bootstyle="secondary-link", padding=(6, 2),
                             command=lambda: self.copy_raw())
            copy.tooltip = "Copy the reply as Markdown"  # type: ignore[attr-defined]
            head.actions.append(copy)
            if cards.markdown:
                self.edit_btn = tb.Button(head, text="Preview" if not rendered else "Edit", bootstyle="secondary-link",
                                          padding=(6, 2), command=lambda: cards.toggle_raw(msg.id))
                self.edit_btn.tooltip = ("Show the raw text" if rendered  # type: ignore[attr-defined]
                                         else "Show the reply as Markdown")
                head.actions.append(self.edit_btn)
        for label, tip, cmd in (("↑", "Move up", lambda: self._do(self.p.message_intents.move_message, index, index - 1)),
                                ("↓", "Move down", lambda: self._do(self.p.message_intents.move_message, index, index + 1)),
                                ("+", "Insert before", lambda: self._do(self.p.message_intents.add_message, None, index)),
                                ("▶", "Run from this message", lambda: self.run.run_from(msg.id)),
                                ("✕", "Remove", lambda: self._do(self.p.message_intents.remove_message, index))):
            # 28 px each: with ↻ Regenerate, Copy and Edit they fit a 400 px message column (800 px window)
            b = tb.Button(head, text=label, width=2, bootstyle="secondary-link", padding=(2, 2), command=cmd)
            b.tooltip = tip  # type: ignore[attr-defined]
            if ro and label != "▶":
                b.configure(state="disabled")
            head.actions.append(b)
        head.arrange(cards.card_width())
        if note := from_server(msg):  # the server's text: say so, it is sent as written
            self.server_note = tb.Label(self, text=note, bootstyle="warning", wraplength=520, justify="left")
            self.server_note.pack(anchor="w")
        if collapsed:
            preview = (msg.text() or "").replace("\n", " ")[:120]
            tb.Label(self, text=preview or "(empty)", bootstyle="secondary").pack(anchor="w")
            return
        if msg.role == "user":
            self._images(msg)
        if msg.role == "assistant" and msg.thinking:
            self._thinking(msg.thinking)
        if rendered:
            self.text = self._text_box(msg.text(), editable=False)
            self.markdown = MarkdownText(self.text, self.open_link)
            if not msg.text():  # a reply about to stream
                warm_up(self.ui.pump)
            self.markdown.show(msg.text())
            # {{var}} marked and explained on hover as in the raw text (a reply is sent as written)
            self.text_assist = TextAssist(self.text, services.text, lambda: (message_place(msg.id), is_trusted_message(msg)),
                                          complete=False)
        else:
            self.text = self._text_box(msg.text(), editable=not ro)
            self.text_assist = TextAssist(self.text, services.text, lambda: (message_place(msg.id), is_trusted_message(msg)),
                                          complete=not ro)
            self.text.bind("<<Modified>>", self._on_text_modified)
        self.text.bind("<Control-Return>", _and_break(partial(self.run.run_from, msg.id)))
        if msg.role == "assistant":
            for call in msg.toolCalls or []:
                self._tool_call(call)
            if msg.toolCalls:
                self._tool_footer(msg)

    # -- parts ---------------------------------------------------------------------------
    def _text_box(self, content: str, editable: bool = True, height: int | None = None) -> tb.Text:
        t = tb.Text(self, wrap="word", height=height or text_height(content), undo=False, font="TkTextFont")
        t.insert("1.0", content)
        t.edit_modified(False)
        if not editable:
            t.configure(state="disabled")
        t.pack(fill="x", pady=2)
        t.bind("<MouseWheel>", self.list.on_wheel)
        t.bind("<Button-4>", self.list.on_wheel)
        t.bind("<Button-5>", self.list.on_wheel)
        return t

    def _images(self, msg: Any) -> None:
        images = [(c.mimeType, c.data) for c in msg.content if isinstance(c, ImageDataContent)]
        if not images:
            return
        remove = None if self.p.read_only else (lambda i: self._do(self.p.message_intents.remove_image, self.index, i))
        self.images = ImageStrip(self, self.services.pictures, images, self.list.on_wheel, on_remove=remove,
                                 on_height_change=self.list.request_layout,
                                 name_of=self.p.message_intents.image_name)
        self.images.pack(fill="x", pady=2)

    def _thinking(self, text: str) -> None:
        key = ("thinking", self.msg.id)
        collapsed: set[Any] = self.p.collapsed  # message ids, and ("thinking", id) for a folded thinking
        shown = key not in collapsed

        def toggle() -> None:
            collapsed.symmetric_difference_update({key})
            self.p.notify(MessagesChanged())

        tb.Button(self, text=("▾ Thinking" if shown else "▸ Thinking"), bootstyle="secondary-link",
                  command=toggle).pack(anchor="w")
        if shown:
            self.thinking = self._text_box(text, editable=False, height=min(6, text_height(text)))
            self.thinking.configure(foreground=self.services.text.colours()["muted"])

    def _tool_call(self, call: Any) -> None:
        tool = next((t for t in self.p.tools if t.name == call.input.name), None)
        box = tb.Labelframe(self, text=f"Tool call: {tool_label(tool) if tool is not None else call.input.name}", padding=4)
        box.pack(fill="x", pady=2)
        status = self.run.tool_status(call.id)
        if tool is not None and tool.is_executable() and not self.p.read_only:
            tb.Button(box, text="▶ Call this tool", bootstyle="link",
                      command=lambda c=call.id: self.run.call_tool(c)).pack(anchor="e")
        if status:
            tb.Label(box, text={"running": "running…", "done": "done", "error": "failed"}.get(status, status),
                     bootstyle="warning" if status == "running" else ("danger" if status == "error" else "success")).pack(anchor="e")
        args = call.input.arguments or {}
        todos = todo_items(args) if call.input.name == "todo_write" else None
        if todos is not None:
            Checklist(box, todos).pack(fill="x")
        else:
            FoldedJson(box, shape_result("", orjson.dumps(args).decode()), self.list.request_layout).pack(fill="x")
        ro = self.p.read_only
        if call.input.name == "ask_user_question" and isinstance(args.get("questions"), list) and not ro:
            use = partial(self._use_answers, call.id)
            AskUserForm(box, use, args["questions"]).pack(fill="x")
        out_text = call.output.text() if call.output is not None else ""
        failed = call.output is not None and call.output.isError is True
        shaped = shape_result(call.input.name, out_text)
        head = tb.Frame(box)
        head.pack(fill="x")
        tb.Label(head, text="Result — the tool reported an error" if failed else "Result",
                 bootstyle="danger" if failed else "secondary").pack(side="left")
        raw_key = f"result:{call.id}"
        if shaped.kind != "text":
            raw = raw_key in self.list.raw
            tb.Button(head, text="Done" if raw else "Edit", bootstyle="secondary-link", padding=(6, 0),
                      command=lambda: self.list.toggle_raw(raw_key)).pack(side="left")
            if not raw:
                shown: Any = (SearchResults(box, shaped.hits, self.open_link) if shaped.kind == "search"
                              else FoldedJson(box, shaped, self.list.request_layout))
                shown.pack(fill="x")
                self.shaped[call.id] = shown
                self._result_footer(box, call)
                return
        rt = tb.Text(box, wrap="word", height=guess_lines(out_text, 80, RESULT_LINES) if out_text else 2,
                     font="TkFixedFont")
        rt.insert("1.0", out_text)
        rt.edit_modified(False)
        rt.pack(fill="x")
        if ro:
            rt.configure(state="disabled")
        rt.bind("<<Modified>>", lambda e: self._on_result_modified(call.id))
        rt.bind("<Control-Return>", _and_break(self.run.continue_run))
        self.results[call.id] = rt
        self.result_assists[call.id] = TextAssist(rt, self.services.text, partial(self._result_place, call), complete=not ro)
        self._result_footer(box, call)

    def _result_footer(self, box: Any, call: Any) -> None:
        """The result's pictures and its "Mark as error" switch."""
        pictures = [(img.mimeType, img.data) for img in (call.output.images() if call.output is not None else ())]
        if pictures:
            ImageStrip(box, self.services.pictures, pictures, self.list.on_wheel,
                       on_height_change=self.list.request_layout).pack(fill="x", pady=2)
        err = tkvars.BooleanVar(self, bool(call.output is not None and call.output.isError))
        tb.Checkbutton(box, text="Mark as error", variable=err, bootstyle="danger-round-toggle",
                       state="disabled" if self.p.read_only else "normal",
                       command=lambda c=call.id, v=err: self._do(self.p.message_intents.set_tool_result, self.index, c,
                                                               self._result_text(c), v.get())).pack(anchor="w")

    def _result_text(self, call_id: str) -> str:
        """A result as it stands: the raw box being edited, else the stored output."""
        if call_id in self.results:
            return str(self.results[call_id].get("1.0", "end-1c"))
        call = next((c for c in self.msg.toolCalls or [] if c.id == call_id), None)
        return call.output.text() if call is not None and call.output is not None else ""

    def open_link(self, url: str) -> None:
        """A link in a reply or a search result: opens in the browser once the user agrees."""
        confirm_open(self.ui.dialogs, url)

    def copy_raw(self) -> None:
        """Copy the reply's raw Markdown (not the text as drawn)."""
        copy_text(self, self.msg.text())
        self.ui.status.set("Copied the reply as Markdown.")

    def _result_place(self, call: Any) -> tuple[str, bool]:
        """A tool result's snapshot place and whether the run renders it (function tools only)."""
        return tool_result_place(self.msg.id, call.id), is_trusted_tool_result(self.p.thread, call)

    def _tool_footer(self, msg: Any) -> None:
        """"N tool calls" · Call tools (every executable call) · Continue (run from here)."""
        row = tb.Frame(self)
        row.pack(fill="x", pady=(2, 0))
        n = len(msg.toolCalls)
        tb.Label(row, text=f"{n} tool call{'s' if n != 1 else ''}", bootstyle="secondary").pack(side="left")
        state = "disabled" if self.p.read_only else "normal"
        tb.Button(row, text="Continue", bootstyle="primary-link", state=state,
                  command=lambda: self.run.run_from(msg.id)).pack(side="right")
        tb.Button(row, text="Call tools", bootstyle="link", state=state,
                  command=lambda: self.run.call_tools(msg.id)).pack(side="right")

    # -- edits ---------------------------------------------------------------------------
    def _do(self, fn: Any, *args: Any) -> None:
        try:
            fn(*args)
        except UserFacingError as exc:
            self.ui.errors.show(str(exc))
        except IndexError:
            pass

    def _use_answers(self, call_id: str, text: str) -> None:
        self._do(self.p.message_intents.set_tool_result, self.index, call_id, text, None)

    def _on_text_modified(self, _e: Any = None) -> None:
        t = self.text
        if t is None or not t.edit_modified():
            return
        t.edit_modified(False)
        with self.list.quietly():  # the card shows the edit already: no redraw
            self._do(self.p.message_intents.set_message_text, self.index, t.get("1.0", "end-1c"))
        if self.text_assist is not None:
            self.text_assist.highlight()
        if fit(t):
            self.update_idletasks()
            self.list.layout()  # cards below move with this one

    def _on_result_modified(self, call_id: str) -> None:
        t = self.results[call_id]
        if not t.edit_modified():
            return
        t.edit_modified(False)
        with self.list.quietly():
            self._do(self.p.message_intents.set_tool_result, self.index, call_id, t.get("1.0", "end-1c"), None)
        self.result_assists[call_id].highlight()

    def pick_image(self, path: str | None = None) -> None:
        path = path or self.ui.dialogs.open_file("Add image", (("Images", "*.png *.jpg *.jpeg *.gif *.webp"), ("All files", "*")))
        if not path:
            return
        ext = path.rsplit(".", 1)[-1].lower()
        mime = {"jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}.get(ext, "image/png")
        try:
            with open(path, "rb") as fh:
                data = base64.b64encode(fh.read()).decode("ascii")
        except OSError as exc:
            self.ui.errors.show(f"Could not read {path}: {exc.strerror or exc}.")
            return
        self._do(self.p.message_intents.add_image, self.index, mime, data, os.path.basename(path))

    def paste_image(self) -> None:
        try:
            import io

            from PIL import ImageGrab

            img = ImageGrab.grabclipboard()
        except Exception:
            img = None
        if img is None or isinstance(img, list):
            self.ui.errors.show("The clipboard holds no image.")
            return
        buf = io.BytesIO()
        img.save(buf, "PNG")
        self._do(self.p.message_intents.add_image, self.index, "image/png", base64.b64encode(buf.getvalue()).decode("ascii"))

    # -- streaming -----------------------------------------------------------------------
    def append_text(self, text: str, limit: int | None = None, follow: bool = True) -> bool:
        """Streamed text: the box grows with it up to `limit` lines, then scrolls inside,
        showing the newest line when `follow` (the list keeps the reader where they are, or
        follows the tail when they were at the bottom). True when the box's height changed;
        `slack_px`: the blank part at its bottom (`text_fit.grow`)."""
        t = self.text
        if t is None:
            return False
        # a reader not at the end keeps their place: re-drawing the open Markdown block would
        # otherwise pull the box's view back to where that block starts
        keep = top_line(t) if not follow and float(t.yview()[0]) > 0.0 else None
        if self.markdown is not None:  # re-parses only the reply's last, open block
            self.markdown.append(text)
        else:
            t.configure(state="normal")
            t.insert("end-1c", text)
            t.edit_modified(False)
            t.configure(state="disabled")
        changed, blank = grow(t, limit, follow)
        if keep is not None and top_line(t) != keep:
            show_top(t, *keep)
        self.slack_px = blank * linespace(t)
        return changed

    def append_thinking(self, text: str) -> None:
        if self.thinking is None:
            return
        self.thinking.configure(state="normal")
        self.thinking.insert("end-1c", text)
        self.thinking.configure(state="disabled")
        grow(self.thinking, 6)
        self.thinking.see("end")
