"""Thumbnails without Tk: sizes that keep the aspect and never enlarge, decoding base64
pictures with Pillow, and a cache that decodes each picture once and remembers failures."""

from __future__ import annotations

import base64
import io
from concurrent.futures import Future

import pytest
from PIL import Image

from llmspace.presenters.thumbnails import ThumbnailCache, decode_fit, decode_thumbnail, fit_size, image_key, thumbnail_size


def png(w: int, h: int, mode: str = "RGB", fmt: str = "PNG") -> str:
    buf = io.BytesIO()
    Image.new(mode, (w, h), "red" if mode == "RGB" else 1).save(buf, fmt)
    return base64.b64encode(buf.getvalue()).decode("ascii")


@pytest.mark.parametrize(("size", "thumb"), [((400, 200), (192, 96)), ((100, 600), (32, 192)), ((50, 20), (50, 20)),
                                             ((192, 192), (192, 192)), ((1000, 1), (192, 1))])
def test_thumbnails_are_192_px_on_the_long_side_and_never_enlarged(size, thumb):
    assert thumbnail_size(*size) == thumb


def test_a_picture_fits_a_box_keeping_its_aspect():
    assert fit_size(4000, 3000, 1000, 1000) == (1000, 750)
    assert fit_size(300, 200, 1000, 1000) == (300, 200)
    assert fit_size(0, 10, 5, 5) == (1, 10)


def test_decoding_scales_pngs_jpegs_and_palette_images():
    assert decode_thumbnail(png(400, 200)).size == (192, 96)
    assert decode_thumbnail(png(900, 300, fmt="JPEG")).size == (192, 64)
    img = decode_thumbnail(png(40, 30, mode="P", fmt="GIF"))
    assert img.size == (40, 30) and img.mode in ("RGB", "RGBA")
    assert decode_fit(png(2000, 1000), 500, 500).size == (500, 250)


def test_data_that_is_no_picture_raises():
    with pytest.raises((ValueError, OSError)):
        decode_thumbnail(base64.b64encode(b"not a picture").decode())


class Worker:
    """Runs submitted work when told to, then delivers it as the pump would."""

    def __init__(self) -> None:
        self.jobs: list = []

    def submit(self, fn, done) -> None:
        self.jobs.append((fn, done))

    def run_all(self) -> None:
        jobs, self.jobs = self.jobs, []
        for fn, done in jobs:
            f: Future = Future()
            try:
                f.set_result(fn())
            except Exception as exc:
                f.set_exception(exc)
            done(f)


def test_the_cache_decodes_each_picture_once_for_every_card_that_asks():
    worker = Worker()
    cache = ThumbnailCache(worker.submit, lambda img: ("photo", img.size), limit=2)
    data = png(400, 200)
    key = image_key("image/png", data)
    got: list = []
    cache.request(key, data, lambda p, why: got.append((p, why)))
    cache.request(key, data, lambda p, why: got.append((p, why)))
    assert cache.decodes == 1 and got == [] and cache.get(key) is None
    worker.run_all()
    assert got == [(("photo", (192, 96)), None)] * 2
    cache.request(key, data, lambda p, why: got.append((p, why)))  # cached: right away
    assert len(got) == 3 and cache.decodes == 1


def test_the_cache_keeps_only_the_most_recent_pictures_and_remembers_failures():
    worker = Worker()
    cache = ThumbnailCache(worker.submit, lambda img: img.size, limit=2)
    datas = [png(10 + i, 10) for i in range(3)]
    keys = [image_key("image/png", d) for d in datas]
    for k, d in zip(keys, datas, strict=True):
        cache.request(k, d, lambda p, why: None)
    worker.run_all()
    assert cache.get(keys[0]) is None and cache.get(keys[2]) == (12, 10)
    bad = base64.b64encode(b"garbage").decode()
    why: list = []
    cache.request(image_key("image/png", bad), bad, lambda p, reason: why.append((p, reason)))
    worker.run_all()
    cache.request(image_key("image/png", bad), bad, lambda p, reason: why.append((p, reason)))
    assert why[0][0] is None and "cannot show this image" in why[0][1] and why[1] == why[0]
    assert cache.decodes == 4
