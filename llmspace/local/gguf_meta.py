"""Reads the metadata of a GGUF file (its key/value header) without loading any tensor.

    meta = read_metadata(path, keys={"tokenizer.chat_template", "general.name"})
    meta.get("tokenizer.chat_template")

The engine checks the chat template before it starts `llama-server` (a model without one
cannot answer chat requests) and takes the model's name and context length from here.
GGUF v2 and v3 (little-endian) are read; arrays are skipped, never loaded, so a 150,000-token
vocabulary costs a seek, not memory. Values of keys outside `keys` are skipped too.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import UserFacingError

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
_MAX_STRING = 64 * 1024 * 1024  # a chat template is a few KB; more than this is a corrupt file


class _Reader:
    def __init__(self, f: BinaryIO, path: Path) -> None:
        self.f, self.path = f, path

    def take(self, n: int) -> bytes:
        data = self.f.read(n)
        if len(data) != n:
            raise UserFacingError(f"{self.path} is cut short (its GGUF header ends early).",
                                  hint="Download or copy the model file again.")
        return data

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self, keep: bool = True) -> str | None:
        n = self.unpack("<Q")
        if n > _MAX_STRING:
            raise UserFacingError(f"{self.path} has a corrupt GGUF header (a {n}-byte string).",
                                  hint="Download or copy the model file again.")
        if not keep:
            self.f.seek(n, 1)
            return None
        return self.take(n).decode("utf-8", "replace")

    def value(self, kind: int, keep: bool) -> Any:
        if kind == _STRING:
            return self.string(keep)
        if kind == _ARRAY:
            inner, count = self.unpack("<I"), self.unpack("<Q")
            if inner in _SCALARS:
                self.f.seek(struct.calcsize(_SCALARS[inner]) * count, 1)
            else:
                for _ in range(count):
                    self.value(inner, keep=False)
            return None
        fmt = _SCALARS.get(kind)
        if fmt is None:
            raise UserFacingError(f"{self.path} has a GGUF value of unknown type {kind}.",
                                  hint="Use a GGUF file made by a recent llama.cpp.")
        return self.unpack(fmt)


def read_metadata(path: Path, keys: set[str] | None = None) -> dict[str, Any]:
    """The metadata of the GGUF file `path` (only `keys` when given; arrays are left out)."""
    try:
        with path.open("rb") as f:
            r = _Reader(f, path)
            if r.take(4) != b"GGUF":
                raise UserFacingError(f"{path} is not a GGUF file.", hint="Give the path of a .gguf model file.")
            version = r.unpack("<I")
            if version not in (2, 3):
                raise UserFacingError(f"{path} is GGUF version {version}; versions 2 and 3 are supported.",
                                      hint="Convert the model with a recent llama.cpp.")
            r.unpack("<Q")  # tensor count
            count = r.unpack("<Q")
            out: dict[str, Any] = {}
            for _ in range(count):
                key = r.string() or ""
                kind = r.unpack("<I")
                keep = keys is None or key in keys
                value = r.value(kind, keep)
                if keep and value is not None:
                    out[key] = value
            return out
    except OSError as exc:
        raise UserFacingError(f"Cannot read {path}: {exc.strerror or exc}.",
                              hint="Check that the file exists and can be read.") from None
