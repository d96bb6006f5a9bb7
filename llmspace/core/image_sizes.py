"""Sizes of base64 images for labels: `base64_size(data)` (decoded bytes, from the length
alone) and `size_text(n)` ("312 bytes", "12 KB", "1.5 MB").

Pure.
"""

from __future__ import annotations


def base64_size(data: str) -> int:
    """Decoded size in bytes of base64 text (from its length; nothing is decoded)."""
    data = data.strip()
    return max(0, len(data) * 3 // 4 - (2 if data.endswith("==") else 1 if data.endswith("=") else 0))


def size_text(size: int) -> str:
    """"312 bytes", "12 KB", "1.5 MB"."""
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.0f} KB"
    return f"{size / (1024 * 1024):.1f} MB"
