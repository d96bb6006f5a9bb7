"""Pictures in message cards: a strip of thumbnails (about 192 px on the long side, decoded
with Pillow on a worker and cached per editor, `presenters/thumbnails.ThumbnailCache`) for
the images of a user message or of a tool result, each with its type and size and, in user
messages, a ✕ to remove it; a click opens `ImagePreview`, the picture fitted to the screen
(Escape or a click closes it). They get the editor's thumbnail cache and the window's pump.
"""

from __future__ import annotations

import tkinter as tk
from collections.abc import Callable
from concurrent.futures import Future
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ...presenters.messages import image_label
from ...presenters.thumbnails import THUMB_SIZE, ThumbnailCache, decode_fit, image_key
from .flow import FlowFrame

if TYPE_CHECKING:
    from ..pump import Pump

SCREEN_SHARE = 0.9  # the preview takes at most this share of the screen


def thumbnail_cache(master: Any, pump: Pump) -> ThumbnailCache:
    """A cache of thumbnails for one editor (`master`: its frame), decoding through the pump."""
    from PIL import ImageTk

    def submit(fn: Callable[[], Any], done: Callable[[Future[Any]], Any]) -> Any:
        return pump.run_in_worker(fn, done, name="thumbnail")

    return ThumbnailCache(submit, lambda img: ImageTk.PhotoImage(img, master=master))


class Pictures:
    """The pictures of one editor's cards: their thumbnail cache (made on first use) and the
    full-size previews, children of the editor's frame `master`; decoded through the pump."""

    def __init__(self, master: Any, pump: Pump) -> None:
        self.master, self.pump = master, pump

    @cached_property
    def cache(self) -> ThumbnailCache:
        return thumbnail_cache(self.master, self.pump)

    def preview(self, mime: str, data: str) -> ImagePreview:
        return ImagePreview(self.master, self.pump, mime, data)


class ImageStrip(FlowFrame):
    """Thumbnails of `images` ((mime type, base64 data) pairs); `on_remove(i)` adds a ✕ per
    image. `thumbs[i]` is the label that shows picture i; `on_wheel` scrolls the message list
    over a picture."""

    def __init__(self, master: Any, pictures: Pictures, images: list[tuple[str, str]],
                 on_wheel: Callable[[Any], Any],
                 on_remove: Callable[[int], None] | None = None,
                 on_height_change: Callable[[], None] | None = None,
                 name_of: Callable[[str, str], str] | None = None) -> None:
        super().__init__(master, gap=8, on_height_change=on_height_change)
        self.pictures = pictures
        self.images = images
        self.thumbs: list[Any] = []
        cache = pictures.cache
        for i, (mime, data) in enumerate(images):
            cell = tb.Frame(self)
            key = image_key(mime, data)
            photo = cache.get(key)
            thumb = tb.Label(cell, text="" if photo is not None else "Loading…", cursor="hand2",
                             bootstyle="secondary")
            if photo is not None:
                thumb.configure(image=photo)
            thumb.pack(anchor="w")
            thumb.bind("<Button-1>", partial(self._on_click, i))
            for seq in ("<MouseWheel>", "<Button-4>", "<Button-5>"):  # the list scrolls over pictures too
                thumb.bind(seq, on_wheel)
            self.thumbs.append(thumb)
            row = tb.Frame(cell)
            row.pack(anchor="w")
            name = name_of(mime, data) if name_of is not None else ""  # the file it was attached from
            tb.Label(row, text=image_label(mime, data, name), bootstyle="secondary").pack(side="left")
            if on_remove is not None:
                tb.Button(row, text="✕", bootstyle="secondary-link", width=2, padding=(2, 0),
                          command=lambda i=i: on_remove(i)).pack(side="left")
            self.add(cell)
            if photo is None:
                cache.request(key, data, partial(self._ready, i))
        self.update_idletasks()  # the cells know their size: lay them out before the card is measured
        self.arrange()

    def _on_click(self, i: int, _e: Any = None) -> None:
        self.zoom(i)

    def _ready(self, i: int, photo: Any, why: str | None) -> None:
        if not self.winfo_exists():
            return
        thumb = self.thumbs[i]
        if photo is not None:
            thumb.configure(image=photo, text="")
        else:
            thumb.configure(text=why or "cannot show this image")
        self.update_idletasks()
        self.arrange()

    def zoom(self, i: int) -> ImagePreview:
        mime, data = self.images[i]
        return self.pictures.preview(mime, data)


class ImagePreview(tk.Toplevel):
    """One picture at up to 90 % of the screen (decoded on a worker); Escape or a click closes."""

    def __init__(self, master: Any, pump: Pump, mime: str, data: str) -> None:
        super().__init__(master)
        self.title(f"Image — {image_label(mime, data).removeprefix('[image] ')}")
        self.photo: Any = None
        self.label = tb.Label(self, text="Loading…", padding=12, anchor="center")
        self.label.pack(fill="both", expand=True)
        for w in (self, self.label):
            w.bind("<Escape>", lambda e: self.destroy())
        self.label.bind("<Button-1>", lambda e: self.destroy())
        max_w = int(self.winfo_screenwidth() * SCREEN_SHARE)
        max_h = int(self.winfo_screenheight() * SCREEN_SHARE)
        self.geometry(f"+{max(0, (self.winfo_screenwidth() - THUMB_SIZE) // 2)}+{max(0, (self.winfo_screenheight() - THUMB_SIZE) // 2)}")
        self.focus_set()

        def done(future: Future[Any]) -> None:
            if not self.winfo_exists():
                return
            try:
                from PIL import ImageTk

                self.photo = ImageTk.PhotoImage(future.result(), master=self)
            except Exception as exc:
                self.label.configure(text=f"Cannot show this image ({exc}).")
                return
            self.label.configure(image=self.photo, text="", padding=0)
            w, h = self.photo.width(), self.photo.height()
            x = max(0, (self.winfo_screenwidth() - w) // 2)
            y = max(0, (self.winfo_screenheight() - h) // 2)
            self.geometry(f"{w}x{h}+{x}+{y}")
            self.focus_set()

        pump.run_in_worker(lambda: decode_fit(data, max_w, max_h), done, name="image-preview")

    def image_size(self) -> tuple[int, int] | None:
        """The shown picture's size in px (None while it loads)."""
        return (self.photo.width(), self.photo.height()) if self.photo is not None else None
