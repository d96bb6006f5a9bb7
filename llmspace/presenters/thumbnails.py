"""Image thumbnails for message cards, without Tk: decoding base64 images with Pillow into
small (about 192 px on the long side) or screen-sized pictures, and a cache that decodes each
image once, off the UI thread, and hands the result to every card that asked for it.

    cache = ThumbnailCache(submit=pump.run_in_worker, make_photo=ImageTk.PhotoImage)
    photo = cache.get(key)          # a ready picture, or None
    cache.request(key, data, show)  # decode on a worker; `show(photo)` on the UI thread

`submit(fn, on_done)` runs `fn` on a worker and calls `on_done(future)` on the UI thread
(`ui/pump.Pump.run_in_worker`); `make_photo(image)` turns a decoded PIL image into what the
view shows (an `ImageTk.PhotoImage`), on the UI thread.
"""

from __future__ import annotations

import base64
import binascii
import io
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

THUMB_SIZE = 192  # px on the long side
CACHE_ENTRIES = 96

Key = tuple[str, int, int]


def image_key(mime_type: str, data: str) -> Key:
    """A cache key for an image's base64 data (its length and hash: no copy is kept)."""
    return mime_type, len(data), hash(data)


def fit_size(width: int, height: int, max_w: int, max_h: int) -> tuple[int, int]:
    """The size of a `width`×`height` picture scaled down (never up) to fit `max_w`×`max_h`."""
    if width <= 0 or height <= 0:
        return max(1, width), max(1, height)
    scale = min(1.0, max_w / width, max_h / height)
    return max(1, round(width * scale)), max(1, round(height * scale))


def thumbnail_size(width: int, height: int, long_side: int = THUMB_SIZE) -> tuple[int, int]:
    """The thumbnail size: at most `long_side` px on the long side, the aspect kept."""
    return fit_size(width, height, long_side, long_side)


def _open(data: str) -> Any:
    from PIL import Image

    try:
        raw = base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"the image data is not base64 ({exc})") from None
    img = Image.open(io.BytesIO(raw))
    img.seek(0)  # the first frame of an animation
    return img


def _displayable(img: Any) -> Any:
    if img.mode not in ("RGB", "RGBA"):
        img = img.convert("RGBA" if "A" in img.getbands() or "transparency" in img.info else "RGB")
    return img


def decode_fit(data: str, max_w: int, max_h: int) -> Any:
    """Decode a base64 image and scale it down to fit `max_w`×`max_h` (a PIL image; raises
    ValueError or OSError for data that is not a picture). Slow for big images: off the UI thread."""
    from PIL import Image

    img = _open(data)
    size = fit_size(img.width, img.height, max_w, max_h)
    if hasattr(img, "draft") and img.format == "JPEG":
        img.draft("RGB", size)  # JPEG decodes at a reduced scale directly
    img = _displayable(img)
    if img.size != size:
        img = img.resize(size, Image.Resampling.LANCZOS)
    img.load()
    return img


def decode_thumbnail(data: str, long_side: int = THUMB_SIZE) -> Any:
    """A thumbnail of a base64 image, at most `long_side` px on the long side."""
    return decode_fit(data, long_side, long_side)


class ThumbnailCache:
    """Decoded thumbnails by `image_key`, the least recently used dropped past `limit`; each
    image is decoded once even when several cards ask for it at the same time."""

    def __init__(self, submit: Callable[[Callable[[], Any], Callable[[Future[Any]], Any]], Any],
                 make_photo: Callable[[Any], Any], limit: int = CACHE_ENTRIES, long_side: int = THUMB_SIZE) -> None:
        self.submit = submit
        self.make_photo = make_photo
        self.limit = limit
        self.long_side = long_side
        self.photos: OrderedDict[Key, Any] = OrderedDict()
        self.failed: dict[Key, str] = {}
        self._waiting: dict[Key, list[Callable[[Any, str | None], Any]]] = {}
        self.decodes = 0

    def get(self, key: Key) -> Any:
        photo = self.photos.get(key)
        if photo is not None:
            self.photos.move_to_end(key)
        return photo

    def request(self, key: Key, data: str, on_ready: Callable[[Any, str | None], Any]) -> None:
        """`on_ready(photo, None)` once the thumbnail exists, or `on_ready(None, reason)` when
        the data is no picture; right away when it is known already."""
        photo = self.get(key)
        if photo is not None or key in self.failed:
            on_ready(photo, self.failed.get(key))
            return
        waiting = self._waiting.get(key)
        if waiting is not None:
            waiting.append(on_ready)
            return
        self._waiting[key] = [on_ready]
        self.decodes += 1
        long_side = self.long_side
        self.submit(lambda: decode_thumbnail(data, long_side), lambda f: self._done(key, f))

    def _done(self, key: Key, future: Future[Any]) -> None:
        callbacks = self._waiting.pop(key, [])
        try:
            photo, reason = self.make_photo(future.result()), None
        except Exception as exc:  # not a picture Pillow reads: the card shows why
            photo, reason = None, f"cannot show this image ({exc})"
        if photo is None:
            self.failed[key] = reason or "cannot show this image"
        else:
            self.photos[key] = photo
            while len(self.photos) > self.limit:
                self.photos.popitem(last=False)
        for fn in callbacks:
            fn(photo, reason)
