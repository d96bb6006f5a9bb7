"""Reads the metadata of a GGUF file (its key/value header) without loading any tensor.

    meta = read_metadata(path, keys={"tokenizer.chat_template", "general.name"})
    meta.get("tokenizer.chat_template")

The engine checks the chat template before it starts `llama-server` (a model without one
cannot answer chat messages) and takes the model's name and context length from here;
`local add` reads the header (keeping nothing) to refuse a file that is not a whole model.
GGUF v2 and v3 (little-endian) are read; arrays are skipped, never loaded, so a 150,000-token
vocabulary costs a walk over its lengths, not memory. Values of keys outside `keys` are skipped.

The file may come from anywhere, so the reader is bounded: arrays nested at most
`MAX_DEPTH` deep, at most `MAX_KEYS` keys, `MAX_ITEMS` array elements walked one by one,
`MAX_KEPT` bytes of values kept, no count or length larger than what is left of the file;
then the tensors' descriptions are read (at least one tensor: a header alone is not a
model) and each tensor must start inside the file (a download cut short is refused here).
Anything else is a UserFacingError that names the file.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import UserFacingError

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
_U64 = struct.Struct("<Q")
_BLOCK = 256 * 1024
_MIN_SIZE = {_STRING: 8, _ARRAY: 12}  # bytes of the smallest value of the type: a length, a type and a count
_MAX_STRING = 64 * 1024 * 1024  # a chat template is a few KB; more than this is a corrupt file
_MAX_KEY = 65_535  # GGUF: a key is at most 2^16 - 1 bytes
MAX_KEYS = 65_536  # a model has a few dozen
MAX_DEPTH = 4  # llama.cpp itself loads no array of arrays
MAX_ITEMS = 4_000_000  # strings and arrays inside arrays: a vocabulary and its merges are ~150,000-600,000
MAX_KEPT = 64 * 1024 * 1024
MAX_TENSORS = 1_000_000  # the largest models have a few thousand
_MAX_DIMS = 4  # GGML_MAX_DIMS
_ALIGNMENT = "general.alignment"
_AGAIN = "Download or copy the model file again."


class _Reader:
    def __init__(self, f: BinaryIO, path: Path) -> None:
        self.f, self.path = f, path
        self.size = os.fstat(f.fileno()).st_size
        self.pos = 0
        self.items = 0
        self.kept = 0

    def corrupt(self, what: str) -> UserFacingError:
        return UserFacingError(f"{self.path} has a corrupt GGUF header ({what}).", hint=_AGAIN)

    def short(self, what: str = "its GGUF header ends early") -> UserFacingError:
        return UserFacingError(f"{self.path} is cut short ({what}).", hint=_AGAIN)

    @property
    def left(self) -> int:
        return self.size - self.pos

    def take(self, n: int) -> bytes:
        data = self.f.read(n) if n <= self.left else b""
        if len(data) != n:
            raise self.short()
        self.pos += n
        return data

    def skip(self, n: int) -> None:
        if n > self.left:
            raise self.short()
        self.f.seek(n, 1)
        self.pos += n

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self, keep: bool = True, limit: int = _MAX_STRING) -> str | None:
        n = self.unpack("<Q")
        if n > limit:
            raise self.corrupt(f"a {n}-byte string")
        if not keep:
            self.skip(n)
            return None
        self.kept += n
        if self.kept > MAX_KEPT:
            raise self.corrupt(f"more than {MAX_KEPT} bytes of metadata values")
        return self.take(n).decode("utf-8", "replace")

    def value(self, kind: int, keep: bool, depth: int = 0) -> Any:
        if kind == _STRING:
            return self.string(keep)
        if kind == _ARRAY:
            return self.array(depth + 1)
        fmt = _SCALARS.get(kind)
        if fmt is None:
            raise UserFacingError(f"{self.path} has a GGUF value of unknown type {kind}.",
                                  hint="Use a GGUF file made by a recent llama.cpp.")
        return self.unpack(fmt)

    def array(self, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise self.corrupt(f"arrays nested more than {MAX_DEPTH} deep")
        inner, count = self.unpack("<I"), self.unpack("<Q")
        scalar = _SCALARS.get(inner)
        each = struct.calcsize(scalar) if scalar else _MIN_SIZE.get(inner, 1)
        if count * each > self.left:
            raise self.corrupt(f"an array of {count} values, more than the file holds")
        if scalar:
            self.skip(each * count)
            return
        self.items += count
        if self.items > MAX_ITEMS:
            raise self.corrupt(f"more than {MAX_ITEMS} values in arrays")
        if inner == _STRING:
            self.skip_strings(count)
            return
        for _ in range(count):
            self.value(inner, keep=False, depth=depth)

    def skip_strings(self, count: int) -> None:
        """Skip `count` strings (a vocabulary): their lengths are read from blocks of the file,
        not with one read and one seek each."""
        pos = block_at = self.pos
        block = b""
        for _ in range(count):
            at = pos - block_at
            if at < 0 or at + 8 > len(block):
                self.f.seek(pos)
                block, block_at, at = self.f.read(_BLOCK), pos, 0
                if len(block) < 8:
                    raise self.short()
            n = _U64.unpack_from(block, at)[0]
            if n > _MAX_STRING:
                raise self.corrupt(f"a {n}-byte string")
            pos += 8 + n
            if pos > self.size:
                raise self.short()
        self.f.seek(pos)
        self.pos = pos


def read_metadata(path: Path, keys: set[str] | None = None) -> dict[str, Any]:
    """The metadata of the GGUF file `path` (only `keys` when given; arrays are left out),
    once the whole header is read and checked (see the module docstring)."""
    try:
        with path.open("rb") as f:
            r = _Reader(f, path)
            if r.take(4) != b"GGUF":
                raise UserFacingError(f"{path} is not a GGUF file.", hint="Give the path of a .gguf model file.")
            version = r.unpack("<I")
            if version not in (2, 3):
                raise UserFacingError(f"{path} is GGUF version {version}; versions 2 and 3 are supported.",
                                      hint="Convert the model with a recent llama.cpp.")
            tensors, count = r.unpack("<Q"), r.unpack("<Q")
            if count > MAX_KEYS:
                raise r.corrupt(f"{count} metadata keys, more than the {MAX_KEYS} a model file may have")
            out: dict[str, Any] = {}
            alignment = 32
            for _ in range(count):
                key = r.string(limit=_MAX_KEY) or ""
                kind = r.unpack("<I")
                keep = keys is None or key in keys
                value = r.value(kind, keep or key == _ALIGNMENT)
                if key == _ALIGNMENT and isinstance(value, int) and not isinstance(value, bool) and value > 0:
                    alignment = value
                if keep and value is not None:
                    out[key] = value
            _check_tensors(r, tensors, alignment)
            return out
    except OSError as exc:
        raise UserFacingError(f"Cannot read {path}: {exc.strerror or exc}.",
                              hint="Check that the file exists and can be read.") from None


def _check_tensors(r: _Reader, count: int, alignment: int) -> None:
    """At least one tensor, each described whole and starting inside the file."""
    if count == 0:
        raise UserFacingError(f"{r.path} has no tensors: it is a GGUF header without a model's weights.",
                              hint=_AGAIN)
    if count > MAX_TENSORS:
        raise r.corrupt(f"{count} tensors, more than the {MAX_TENSORS} a model file may have")
    if count * 24 > r.left:  # each: a name's length, its dimensions' count, a type, an offset
        raise r.short("its tensors' descriptions end early")
    last = 0
    for _ in range(count):
        r.string(keep=False, limit=_MAX_KEY)
        dims = r.unpack("<I")
        if dims > _MAX_DIMS:
            raise r.corrupt(f"a tensor of {dims} dimensions")
        r.skip(8 * dims)
        r.unpack("<I")  # its type
        last = max(last, r.unpack("<Q"))
    data = r.pos + (-r.pos % alignment)
    if data + last >= r.size:
        raise r.short("its tensor data ends early")
