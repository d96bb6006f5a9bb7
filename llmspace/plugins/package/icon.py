"""`icon.png` checks: a regular file, a real PNG (signature and a valid
IHDR chunk), at most 2 MiB, at most 4096 px each side. `icon_problem` says why an icon
cannot be used (the caller falls back to the default icon with a warning and goes on
loading).
"""

from __future__ import annotations

import os
import stat
import struct
import zlib
from pathlib import Path

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
ICON_MAX_BYTES = 2 * 1024 * 1024
ICON_MAX_SIDE = 4096


def icon_problem(path: Path) -> str | None:
    """None for a usable icon, else the reason (a missing icon is not a problem: check first)."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        return f"icon.png cannot be read: {exc.strerror or exc}"
    if stat.S_ISLNK(st.st_mode):
        return "icon.png is a symbolic link; symlinks are rejected"
    if not stat.S_ISREG(st.st_mode):
        return "icon.png is not a regular file"
    if st.st_size > ICON_MAX_BYTES:
        return f"icon.png is {st.st_size} bytes; the limit is 2 MiB"
    try:
        with open(path, "rb") as fh:
            head = fh.read(33)
    except OSError as exc:
        return f"icon.png cannot be read: {exc.strerror or exc}"
    if len(head) < 33 or not head.startswith(PNG_SIGNATURE):
        return "icon.png is not a PNG file (bad signature)"
    length, kind = struct.unpack(">I4s", head[8:16])
    if kind != b"IHDR" or length != 13:
        return "icon.png is not a valid PNG (the IHDR chunk must come first)"
    body, (crc,) = head[16:29], struct.unpack(">I", head[29:33])
    if zlib.crc32(b"IHDR" + body) != crc:
        return "icon.png is not a valid PNG (IHDR checksum mismatch)"
    width, height = struct.unpack(">II", body[:8])
    if width == 0 or height == 0:
        return "icon.png has a zero width or height"
    if width > ICON_MAX_SIDE or height > ICON_MAX_SIDE:
        return f"icon.png is {width}×{height} px; each side may be at most {ICON_MAX_SIDE} px"
    return None
