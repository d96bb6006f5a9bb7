"""Message-card labels computed without Tk."""

from __future__ import annotations

import base64

from llmspace.presenters.messages import image_label


def test_a_small_image_shows_its_size_in_bytes_instead_of_zero_kb():
    data = base64.b64encode(b"x" * 300).decode()
    assert image_label("image/png", data) == "[image] image/png · 300 bytes"


def test_larger_images_show_kilobytes_and_megabytes_with_one_decimal():
    assert image_label("image/jpeg", base64.b64encode(b"x" * 2048).decode()).endswith("· 2.0 KB")
    assert image_label("image/jpeg", base64.b64encode(b"x" * (3 * 1024 * 1024 + 1)).decode()).endswith("· 3.0 MB")


def test_padding_is_not_counted_as_image_bytes():
    for n in (1, 2, 3, 4, 5):
        assert image_label("image/gif", base64.b64encode(b"y" * n).decode()).endswith(f"· {n} bytes")
