"""A minimal valid GGUF file for model tests: header, one metadata pair, one tiny tensor."""

from __future__ import annotations

import struct
from pathlib import Path

ALIGNMENT = 32  # GGUF's default `general.alignment`


def gguf_string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def gguf_bytes(architecture: str = "llama", padding: int = 0) -> bytes:
    """GGUF v3: magic, version, 1 tensor, 1 key/value (`general.architecture`, a string), the
    tensor's description (`t`, one f32), its 4 bytes at the first aligned offset, then
    `padding` bytes (tests that need a bigger file)."""
    header = b"GGUF" + struct.pack("<IQQ", 3, 1, 1)
    pair = gguf_string("general.architecture") + struct.pack("<I", 8) + gguf_string(architecture)
    tensor = gguf_string("t") + struct.pack("<IQIQ", 1, 1, 0, 0)  # 1 dimension of 1, type f32, offset 0
    head = header + pair + tensor
    head += bytes(-len(head) % ALIGNMENT)
    return head + struct.pack("<f", 1.0) + bytes(i % 251 for i in range(padding))


def write_gguf(path: Path, architecture: str = "llama", padding: int = 0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gguf_bytes(architecture, padding))
    return path
