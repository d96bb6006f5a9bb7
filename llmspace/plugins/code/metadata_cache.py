"""The metadata cache of code extensions: what a host reported at `initialize`, kept under
`<data root>/cache/plugins/<plugin>.json` so that listing a plugin's tools, commands and
storages does not run its code again until one of its files changes.

    key = cache_key(files, runtime="python", app_version="0.1.0")
    cached = read_cached(cache_dir, "atlas", key)      # None when missing, stale or unreadable
    write_cached(cache_dir, "atlas", key, meta)

The key is a SHA-256 over the runtime, the app version and every code file's path and
bytes. A cache file that cannot be read or written is ignored (the host reports again).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ...errors import UserFacingError
from ...jsonio import read_file_bytes, write_json_atomic
from ...paths import safe_component
from ..hosts.spec import CodeFile

log = logging.getLogger("llmspace.plugins")
CACHE_VERSION = 3  # 2: metadata without control characters (cached before that, it may hold them); 3: storages report capabilities.list


def cache_key(files: Iterable[CodeFile], *, runtime: str, app_version: str) -> str:
    digest = hashlib.sha256(f"v{CACHE_VERSION}\0{runtime}\0{app_version}".encode())
    for f in sorted(files, key=lambda f: str(f.path)):
        digest.update(f"\0{f.kind}\0{f.id}\0{f.path}\0".encode())
        try:
            digest.update(read_file_bytes(f.path, max_bytes=32 * 1024 * 1024))
        except UserFacingError:
            digest.update(b"\0unreadable")
    return digest.hexdigest()


def _file(cache_dir: Path, plugin: str, runtime: str) -> Path:
    return cache_dir / f"{safe_component(plugin)}.{runtime}.json"


def read_cached(cache_dir: Path, plugin: str, runtime: str, key: str) -> dict[str, Any] | None:
    path = _file(cache_dir, plugin, runtime)
    try:
        data = json.loads(read_file_bytes(path, max_bytes=8 * 1024 * 1024))
    except (UserFacingError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != key or not isinstance(data.get("meta"), dict):
        return None
    meta: dict[str, Any] = data["meta"]
    return meta


def write_cached(cache_dir: Path, plugin: str, runtime: str, key: str, meta: dict[str, Any]) -> None:
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        write_json_atomic(_file(cache_dir, plugin, runtime), {"key": key, "plugin": plugin, "meta": meta})
    except (OSError, UserFacingError, ValueError):
        log.warning("could not cache the extension metadata of %s", plugin, exc_info=True)
