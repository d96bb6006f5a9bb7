"""Pictures in message cards, in a real window: a user message's image and a tool result's
image show as thumbnails of about 192 px on the long side, decoded off the UI thread and
cached (a redraw shows them at once); a click opens the picture fitted to the screen, Escape
closes it; the ✕ under a user message's picture removes it (and Undo brings it back)."""

from __future__ import annotations

import base64
import io
import threading

import orjson
import pytest
from PIL import Image

from llmspace.jsonio import write_bytes_atomic
from llmspace.ui.editor.card_images import ImagePreview, ImageStrip

from ..conftest import pump_until


def png(w: int, h: int, colour: str = "red") -> str:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), colour).save(buf, "PNG")
    return base64.b64encode(buf.getvalue()).decode("ascii")


@pytest.fixture
def ed(window, app):
    write_bytes_atomic(app.workspace.root / "pictures.json", orjson.dumps({
        "title": "pictures", "context": {"messages": [
            {"id": "u1", "role": "user", "content": [
                {"type": "image_data", "mimeType": "image/png", "data": png(400, 200)},
                {"type": "image_data", "mimeType": "image/png", "data": png(3000, 1500, "blue")},
                {"type": "text", "text": "What is in these?"}]},
            {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": "Let me look."}],
             "toolCalls": [{"id": "c1", "input": {"name": "screenshot", "arguments": {}},
                            "output": {"content": [{"type": "text", "text": "taken"},
                                                   {"type": "image", "mimeType": "image/png", "data": png(100, 300)}]}}]}]}}))
    window.tree_view.refresh()
    view = window.open_thread("pictures.json")
    view.list.follow = False
    view.list.first = 0
    view.list.render()
    return view


def strips(widget) -> list[ImageStrip]:
    found, stack = [], [widget]
    while stack:
        w = stack.pop()
        if isinstance(w, ImageStrip):
            found.append(w)
        stack.extend(w.winfo_children())
    return found


def shown_size(root, label) -> tuple[int, int] | None:
    image = label.cget("image")
    name = str(image[0] if isinstance(image, tuple) and image else image or "")
    if not name:
        return None
    return int(root.tk.call("image", "width", name)), int(root.tk.call("image", "height", name))


def test_message_and_tool_result_pictures_show_as_thumbnails_decoded_off_the_ui_thread(ed, window, monkeypatch):
    from llmspace.presenters import thumbnails

    threads: list[str] = []
    decode = thumbnails.decode_thumbnail

    def spy(data, long_side=thumbnails.THUMB_SIZE):
        threads.append(threading.current_thread().name)
        return decode(data, long_side)

    monkeypatch.setattr(thumbnails, "decode_thumbnail", spy)
    ed.pictures.__dict__.pop("cache", None)  # a fresh cache that decodes through the spy
    ed.list.render()
    root = window.root
    user = strips(ed.list.cards["u1"])[0]
    tool = strips(ed.list.cards["a1"])[0]
    pump_until(root, lambda: all(shown_size(root, t) for t in (*user.thumbs, *tool.thumbs)), 20)
    assert [shown_size(root, t) for t in user.thumbs] == [(192, 96), (192, 96)]
    assert [shown_size(root, t) for t in tool.thumbs] == [(64, 192)]
    assert len(threads) == 3 and threading.main_thread().name not in threads
    root.update()
    card = ed.list.cards["u1"]
    assert all(t.winfo_ismapped() and t.winfo_height() >= 96 for t in user.thumbs)
    assert card.text.winfo_y() >= user.winfo_y() + user.winfo_height()  # the text sits below the pictures
    ed.list.render()  # a redraw shows the cached thumbnails at once, without decoding again
    redrawn = strips(ed.list.cards["u1"])[0]
    assert [shown_size(root, t) for t in redrawn.thumbs] == [(192, 96), (192, 96)] and len(threads) == 3


def test_a_click_on_a_thumbnail_opens_the_picture_fitted_to_the_screen_and_escape_closes_it(ed, window):
    root = window.root
    strip = strips(ed.list.cards["u1"])[0]
    pump_until(root, lambda: shown_size(root, strip.thumbs[1]), 20)
    strip.thumbs[1].event_generate("<Button-1>", x=5, y=5)
    preview = pump_until(root, lambda: next((w for w in ed.winfo_children() if isinstance(w, ImagePreview)), None), 10)
    pump_until(root, lambda: preview.image_size(), 20)
    sw, sh = root.winfo_screenwidth(), root.winfo_screenheight()
    w, h = preview.image_size()
    assert w <= sw * 0.9 and h <= sh * 0.9 and abs(w / h - 2.0) < 0.02 and w > 192
    pump_until(root, lambda: preview.winfo_ismapped() and preview.winfo_width() >= w, 10)
    assert "image/png" in preview.title()
    preview.focus_force()
    preview.event_generate("<Escape>")
    root.update()
    assert not preview.winfo_exists()


def test_the_cross_under_a_picture_removes_it_and_undo_brings_it_back(ed, window):
    strip = strips(ed.list.cards["u1"])[0]
    cross = next(w for cell in strip.items for row in cell.winfo_children() for w in row.winfo_children()
                 if str(w.cget("text")) == "✕")
    cross.invoke()
    assert [c.type for c in ed.p.messages[0].content] == ["image_data", "text"]
    ed.undo()
    assert [c.type for c in ed.p.messages[0].content] == ["image_data", "image_data", "text"]
