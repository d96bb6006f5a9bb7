"""The response cache of evaluation cells: `$LLM_SPACE_HOME/cache/eval/`.

A model call's outcome is stored under a key made of the provider, model, base URL, the
rendered request (system prompt, messages), the settings (model parameters), the tools and
the repeat index — so repeat 2 of a cell is a real second call, never repeat 1's answer.
`ResponseCache.get(key)` / `.put(key, value)`; each entry is one JSON file written through
`jsonio`. `prune()` removes the oldest entries until the folder is under its size cap
(default 500 MB); `clear(folder)` empties it (`llmspace eval cache clear`). A damaged entry
is a miss.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..jsonio import read_json, write_json_atomic

CacheEntry = dict[str, Any]  # a call's reply as `records.reply_data` writes it (read back with `records.parse_reply`)

DEFAULT_CAP_BYTES = 500 * 1024 * 1024


def cache_key(provider: str, model: str, base_url: str, request: dict[str, Any], repeat: int) -> str:
    data = {"provider": provider, "model": model, "baseUrl": base_url, "request": request, "repeat": repeat}
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8")).hexdigest()


class ResponseCache:
    def __init__(self, folder: Path, cap_bytes: int = DEFAULT_CAP_BYTES) -> None:
        self.folder = folder
        self.cap_bytes = cap_bytes

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> CacheEntry | None:
        path = self._path(key)
        if not path.exists():
            return None
        try:
            value = read_json(path)
        except Exception:  # a damaged entry is a miss
            return None
        return value if isinstance(value, dict) else None

    def put(self, key: str, value: CacheEntry) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(path, value)

    def prune(self) -> int:
        """Remove the least recently written entries until the cache is under its cap; returns how many."""
        entries: list[tuple[float, int, str]] = []
        total = 0
        for dirpath, _dirs, files in os.walk(self.folder):
            for name in files:
                p = os.path.join(dirpath, name)
                try:
                    st = os.stat(p)
                except OSError:
                    continue
                entries.append((st.st_mtime, st.st_size, p))
                total += st.st_size
        removed = 0
        for _mtime, size, p in sorted(entries):
            if total <= self.cap_bytes:
                break
            try:
                os.remove(p)
            except OSError:
                continue
            total -= size
            removed += 1
        return removed


def clear(folder: Path) -> tuple[int, int]:
    """Empty the cache folder; returns (entries removed, bytes freed)."""
    count = freed = 0
    if not folder.exists():
        return 0, 0
    for dirpath, _dirs, files in os.walk(folder, topdown=False):
        for name in files:
            p = os.path.join(dirpath, name)
            try:
                freed += os.stat(p).st_size
                os.remove(p)
                count += 1
            except OSError:
                pass
        if dirpath != str(folder):
            try:
                os.rmdir(dirpath)
            except OSError:
                pass
    return count, freed
