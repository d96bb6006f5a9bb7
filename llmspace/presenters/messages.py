"""Message intents of the editor presenter: add, insert, remove, reorder (buttons or drag and
drop: `drop_slot`, `drop_line`, `MessageIntents.drop_message`), switch role,
edit text, images in user messages, collapse, tool results (and error marks), pending
function calls, cut after a message. `MessageIntents(doc)` is a component of
`presenters/editor.EditorPresenter` (`presenter.message_intents`); `doc` is the presenter,
seen through `MessageDocument`: the working thread, undo checkpoints and notifications.
No Tk.
"""

from __future__ import annotations

import uuid
from typing import Any, Protocol

from ..core.image_sizes import base64_size
from ..core.model import (
    AssistantMessage,
    ImageDataContent,
    TextContent,
    Thread,
    Tool,
    ToolCallOutput,
    UserMessage,
)
from ..errors import UserFacingError
from .view_updates import EditorUpdate, MessageChanged, MessagesChanged


def image_label(mime_type: str, base64_data: str, name: str = "") -> str:
    """'[image] cat.png · 312 bytes' ('[image] image/png · …' when the file name is not known)
    — the decoded size, never a misleading '0 KB'."""
    size = base64_size(base64_data)
    if size < 1024:
        text = f"{size} bytes"
    elif size < 1024 * 1024:
        text = f"{size / 1024:.1f} KB"
    else:
        text = f"{size / (1024 * 1024):.1f} MB"
    return f"[image] {name or mime_type} · {text}"


def drop_slot(y: float, cards: list[tuple[int, int, int]]) -> int | None:
    """The gap a dragged message would drop into, for a pointer `y` over the shown cards
    `cards` = (message index, top, height), top to bottom: the gap before the first card whose
    middle is below `y`, else the gap after the last card (None when no card is shown)."""
    for index, top, height in cards:
        if y < top + height / 2:
            return index
    return cards[-1][0] + 1 if cards else None


def drop_line(slot: int, cards: list[tuple[int, int, int]]) -> int:
    """The y of the drop indicator line for gap `slot` (between two shown cards)."""
    for index, top, _height in cards:
        if index == slot:
            return top
    last = cards[-1] if cards else (0, 0, 0)
    return last[1] + last[2]


def drop_position(index: int, slot: int) -> int:
    """The new index of the message at `index` dropped into gap `slot` (0: before the first
    message, n: after the last)."""
    return slot if slot <= index else slot - 1


class MessageDocument(Protocol):
    """What `MessageIntents` uses of its owner (`presenters/editor.EditorPresenter`)."""

    thread: Thread
    collapsed: set[str]

    @property
    def tools(self) -> list[Tool]: ...

    def checkpoint(self, key: Any = None) -> None: ...

    def edited(self, update: EditorUpdate) -> None: ...

    def invalidate(self, hook: str, *args: Any) -> None: ...

    def notify(self, update: EditorUpdate) -> None: ...


class MessageIntents:
    """Intents on the messages of `doc.thread`."""

    def __init__(self, doc: MessageDocument) -> None:
        self.doc = doc
        # File names of images attached in this session (the thread format has no place for
        # them: files stay as the original app writes them), by `thumbnails.image_key`.
        self.image_names: dict[Any, str] = {}

    def image_name(self, mime: str, b64: str) -> str:
        """The file name an image was attached from in this session, or ""."""
        from .thumbnails import image_key

        return self.image_names.get(image_key(mime, b64), "")

    @staticmethod
    def new_message(role: str, text: str = "") -> UserMessage | AssistantMessage:
        mid = str(uuid.uuid4())
        if role == "assistant":
            return AssistantMessage(id=mid, role="assistant", content=[TextContent(type="text", text=text)])
        return UserMessage(id=mid, role="user", content=[TextContent(type="text", text=text)])

    def add_message(self, role: str | None = None, before: int | None = None) -> str:
        """Append (or insert before index `before`) a message; role alternates by default."""
        msgs = self.doc.thread.messages
        if role is None:
            ref = msgs[before - 1] if before else (msgs[-1] if msgs and before is None else None)
            role = "assistant" if ref is not None and ref.role == "user" else "user"
        self.doc.checkpoint(None)
        msg = self.new_message(role)
        lst = self.doc.thread.ensure_messages()
        lst.insert(len(lst) if before is None else before, msg)
        self.doc.edited(MessagesChanged())
        return msg.id

    def remove_message(self, index: int) -> None:
        self.doc.checkpoint(None)
        del self.doc.thread.ensure_messages()[index]
        self.doc.edited(MessagesChanged())

    def move_message(self, index: int, to: int) -> None:
        lst = self.doc.thread.ensure_messages()
        to = max(0, min(len(lst) - 1, to))
        if to == index:
            return
        self.doc.checkpoint(None)
        lst.insert(to, lst.pop(index))
        self.doc.edited(MessagesChanged())

    def drop_message(self, index: int, slot: int) -> bool:
        """Move the message at `index` into gap `slot` (a drag and drop; one undo step).
        False when that leaves it where it was."""
        to = drop_position(index, slot)
        if to == index or not 0 <= to < len(self.doc.thread.messages):
            return False
        self.move_message(index, to)
        return True

    def toggle_role(self, index: int) -> None:
        lst = self.doc.thread.ensure_messages()
        old = lst[index]
        self.doc.checkpoint(None)
        data = old.model_dump(exclude_unset=True, by_alias=True)
        text = old.text()
        if old.role == "user":
            images = [c for c in old.content if isinstance(c, ImageDataContent)]
            # assistant messages never show images; they are kept (not lost) for a toggle back
            new: Any = AssistantMessage(id=old.id, role="assistant", content=[*images, TextContent(type="text", text=text)])
        else:
            keep = {k: v for k, v in data.items() if k not in ("id", "role", "content", "thinking", "toolCalls", "usage", "timing")}
            images = [c for c in old.content if isinstance(c, ImageDataContent)]
            new = UserMessage(id=old.id, role="user", content=[*images, TextContent(type="text", text=text)], **keep)
        lst[index] = new
        self.doc.edited(MessagesChanged())

    def set_message_text(self, index: int, text: str) -> None:
        msg = self.doc.thread.ensure_messages()[index]
        if msg.text() == text:
            return
        self.doc.checkpoint(("text", msg.id))
        self.doc.invalidate("on_message_edited", msg.id)
        texts = [c for c in msg.content if isinstance(c, TextContent)]
        if texts:
            texts[0].text = text
            if len(texts) > 1:
                msg.content = [c for c in msg.content if not isinstance(c, TextContent) or c is texts[0]]
        else:
            msg.content = [*msg.content, TextContent(type="text", text=text)]
        self.doc.edited(MessageChanged(index))

    def add_image(self, index: int, mime: str, b64: str, name: str = "") -> None:
        msg = self.doc.thread.ensure_messages()[index]
        if msg.role != "user":
            raise UserFacingError("Images can only be added to user messages.")
        self.doc.checkpoint(None)
        images = [c for c in msg.content if isinstance(c, ImageDataContent)]
        rest = [c for c in msg.content if not isinstance(c, ImageDataContent)]
        msg.content = [*images, ImageDataContent(type="image_data", mimeType=mime, data=b64), *rest]
        if name:
            from .thumbnails import image_key

            self.image_names[image_key(mime, b64)] = name
        self.doc.edited(MessagesChanged())

    def remove_image(self, index: int, image_index: int) -> None:
        msg = self.doc.thread.ensure_messages()[index]
        images = [c for c in msg.content if isinstance(c, ImageDataContent)]
        self.doc.checkpoint(None)
        drop = images[image_index]
        msg.content = [c for c in msg.content if c is not drop]
        self.doc.edited(MessagesChanged())

    def toggle_collapsed(self, message_id: str) -> None:
        self.doc.collapsed.symmetric_difference_update({message_id})
        self.doc.notify(MessagesChanged())

    def _call(self, index: int, call_id: str) -> tuple[Any, Any]:
        msg = self.doc.thread.ensure_messages()[index]
        call = next((c for c in getattr(msg, "toolCalls", None) or [] if c.id == call_id), None)
        if call is None:
            raise UserFacingError("That tool call is no longer in the message.")
        self.doc.checkpoint(("result", call_id))
        self.doc.invalidate("on_tool_result_edited", msg.id, call_id)
        return msg, call

    def set_tool_result(self, index: int, call_id: str, text: str, is_error: bool | None = None) -> None:
        """Type a call's result text (images the tool returned stay after it)."""
        _msg, call = self._call(index, call_id)
        if call.output is None:
            call.output = ToolCallOutput(content=[TextContent(type="text", text=text)])
        else:
            call.output.content = [TextContent(type="text", text=text), *call.output.images()]
        if is_error is not None:
            if is_error:
                call.output.isError = True
            elif call.output.isError is not None:
                call.output.isError = False
        self.doc.edited(MessageChanged(index))

    def set_tool_output(self, index: int, call_id: str, output: ToolCallOutput) -> None:
        """Put a whole tool output (text and image parts, error flag) in a call's result."""
        _msg, call = self._call(index, call_id)
        call.output = output
        self.doc.edited(MessageChanged(index))

    def pending_function_calls(self) -> list[tuple[int, Any]]:
        """Tool calls of the last assistant message that still need a result typed by hand."""
        msgs = self.doc.thread.messages
        if not msgs or msgs[-1].role != "assistant":
            return []
        tools = {t.name: t for t in self.doc.tools}
        out = []
        for call in msgs[-1].toolCalls or []:
            tool = tools.get(call.input.name)
            empty = call.output is None or not (call.output.text().strip() or call.output.images())
            if empty and (tool is None or not tool.is_executable()):
                out.append((len(msgs) - 1, call))
        return out

    def truncate_after(self, index: int) -> None:
        lst = self.doc.thread.ensure_messages()
        if index < len(lst) - 1:
            self.doc.checkpoint(None)
            del lst[index + 1:]
            self.doc.edited(MessagesChanged())
