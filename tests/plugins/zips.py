"""Builders of real plugin ZIP files for the installer, pack and check tests.

`write_zip(path, entries)` writes entries given as `Entry` values (name, data, Unix mode)
exactly as named, so hostile names (`../x`, `/abs`, `a\\b`, `C:x`) and special types
(symbolic links, FIFOs) reach the archive as an attacker would write them.
`manifest(name, version)` returns `package.json` bytes; `plugin_tree(folder, …)` writes a
plugin folder on disk.
"""

from __future__ import annotations

import json
import stat
import warnings
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MiB = 1024 * 1024


@dataclass(frozen=True)
class Entry:
    name: str
    data: bytes = b""
    mode: int = stat.S_IFREG | 0o644


def manifest(name: str = "weather-kit", version: str = "1.2.3", **extra: Any) -> bytes:
    data: dict[str, Any] = {"name": name, "version": version, "engines": {"llm-space": ">=4.7.1"}}
    data.update(extra)
    return json.dumps(data, indent=2).encode()


def dir_entry(name: str) -> Entry:
    return Entry(name if name.endswith("/") else name + "/", b"", stat.S_IFDIR | 0o755)


def write_zip(path: Path, entries: Iterable[Entry], *, compression: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression) as zf, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names are part of the corpus
        for e in entries:
            info = zipfile.ZipInfo(e.name, date_time=(2024, 1, 1, 0, 0, 0))
            info.external_attr = (e.mode & 0xFFFF) << 16
            if stat.S_ISDIR(e.mode):
                info.external_attr |= 0x10
            info.create_system = 3
            info.compress_type = compression
            zf.writestr(info, e.data)
    return path


def plugin_entries(name: str = "weather-kit", version: str = "1.2.3", prefix: str = "", marker: str = "v1") -> list[Entry]:
    """A small plugin: package.json, a skill and a tool file, all under `prefix`."""
    return [
        Entry(prefix + "package.json", manifest(name, version)),
        Entry(prefix + "skills/forecast/SKILL.md", b"---\nname: forecast\ndescription: Forecasts.\n---\nBody\n"),
        Entry(prefix + "tools/now.py", f"MARKER = {marker!r}\n".encode()),
        Entry(prefix + "bin/run.sh", b"#!/bin/sh\necho hi\n", stat.S_IFREG | 0o755),
    ]


def good_zip(path: Path, *, name: str = "weather-kit", version: str = "1.2.3", wrapper: str | None = None,
             marker: str = "v1") -> Path:
    prefix = f"{wrapper}/" if wrapper else ""
    entries = ([dir_entry(wrapper)] if wrapper else []) + plugin_entries(name, version, prefix, marker)
    return write_zip(path, entries)


def bomb_zip(path: Path, *, extracted: int, chunk: int = MiB) -> Path:
    """A plugin ZIP whose `blob.bin` inflates to `extracted` bytes of zeros (about 0.5 % of
    that compressed), written in a stream."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        zf.writestr("package.json", manifest())
        info = zipfile.ZipInfo("blob.bin", date_time=(2024, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        zeros = bytes(chunk)
        with zf.open(info, "w", force_zip64=True) as out:
            left = extracted
            while left > 0:
                out.write(zeros[: min(chunk, left)])
                left -= chunk
    return path


def many_entries_zip(path: Path, count: int) -> Path:
    """A plugin ZIP with `count` entries in all (package.json and empty files), stored."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("package.json", manifest())
        for i in range(count - 1):
            zf.writestr(f"files/f{i:05d}.txt", b"")
    return path


def oversize_zip(path: Path, size: int) -> Path:
    """A valid plugin ZIP of more than `size` bytes: a good ZIP after `size` bytes of
    leading zeros (a sparse hole; zipfile reads ZIPs with data in front, as self-extractors)."""
    inner = good_zip(path.with_suffix(".inner"))
    data = inner.read_bytes()
    inner.unlink()
    with open(path, "wb") as f:
        f.seek(size)
        f.write(data)
    return path


def plugin_tree(folder: Path, files: dict[str, bytes | str]) -> Path:
    """Write `files` (relative path → content) under `folder`."""
    for rel, content in files.items():
        p = folder / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content.encode() if isinstance(content, str) else content)
    return folder


def tree_snapshot(root: Path) -> dict[str, bytes | None]:
    """Every path under `root` (folders as None, files with their bytes), for before/after checks."""
    out: dict[str, bytes | None] = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        out[rel] = None if p.is_dir() and not p.is_symlink() else (p.read_bytes() if p.is_file() and not p.is_symlink() else b"<link>")
    return out
