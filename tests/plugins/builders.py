"""Builders of real plugin folders for the plugin tests."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path
from typing import Any


def png_bytes(width: int = 16, height: int = 16) -> bytes:
    """A small valid PNG header + IHDR + IEND (IDAT omitted: only the header is checked)."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IEND", b"")


def make_plugin(home: Path, name: str, *, folder: str | None = None, engines: str = ">=4.7.1",
                version: str = "1.0.0", files: dict[str, str | bytes | Any] | None = None,
                **fields: Any) -> Path:
    """`plugins/<folder or name>/` with a package.json and `files` (str, bytes, or JSON values)."""
    root = home / "plugins" / (folder or name)
    root.mkdir(parents=True, exist_ok=True)
    pkg: dict[str, Any] = {"name": name, "version": version, "engines": {"llm-space": engines}, **fields}
    (root / "package.json").write_text(json.dumps(pkg), encoding="utf-8")
    for rel, content in (files or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_text(json.dumps(content), encoding="utf-8")
    return root


SKILL = "---\nname: review\ndescription: Review a release\n---\n# Review\n"

SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "Team tools settings",
    "required": ["endpoint"],
    "properties": {
        "endpoint": {"type": "string", "title": "Service endpoint", "default": "https://api.example.com"},
        "requestTimeout": {"type": "integer", "title": "Timeout", "default": 30},
        "ratio": {"type": "number"},
        "mode": {"type": "string", "enum": ["standard", "strict"], "default": "standard"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "apiToken": {"type": "string", "format": "password", "minLength": 12},
        "notifications": {"type": "object", "properties": {
            "enabled": {"type": "boolean", "title": "Show notifications", "default": True},
            "channel": {"type": "string", "writeOnly": True},
        }},
    },
}
