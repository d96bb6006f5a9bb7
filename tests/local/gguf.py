"""A minimal valid GGUF file for model tests: header, one metadata pair, no tensors."""

from __future__ import annotations

import struct
from pathlib import Path


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def gguf_bytes(architecture: str = "llama", padding: int = 0) -> bytes:
    """GGUF v3: magic, version, 0 tensors, 1 key/value (`general.architecture`, a string),
    then `padding` bytes (tests that need a bigger file)."""
    header = b"GGUF" + struct.pack("<IQQ", 3, 0, 1)
    pair = _string("general.architecture") + struct.pack("<I", 8) + _string(architecture)
    return header + pair + bytes(i % 251 for i in range(padding))


def write_gguf(path: Path, architecture: str = "llama", padding: int = 0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gguf_bytes(architecture, padding))
    return path
