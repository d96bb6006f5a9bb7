"""The "Atlas library" Thread Storage: threads kept as JSON files in a local folder.

    llm-space://threads/atlas/project/alpha?revision=latest   → <library>/project/alpha.json

The library folder is the `libraryFolder` setting, or `$LLM_SPACE_HOME/data/plugins/atlas/library`
when it is empty (runtime data never goes into the plugin folder). Readable and writable:

- `resolve_latest(id)`: the resource ID of a deep link → a locator `{"id", "version", "filename"}`.
  The query and fragment are stripped (`revision=latest` is the only revision there is),
  `%xx` escapes are decoded, and the ID is validated: relative, `/`-separated names of
  letters, digits, spaces, `.`, `_` and `-`; no `..`, no absolute path, no backslash.
- `read(locator)`: the thread JSON in `<library>/<id>.json`.
- `write(thread, id)`: saves atomically (a temp file renamed over the old one) and returns
  the locator; a new thread (`id` None) gets `inbox/<title-slug>-<random>`.
- `list(context, {cursor, query})` (optional; LLM Space's extension of the guide): the
  library's threads, newest first, `PAGE_SIZE` a page; `query` matches the ID or the title
  (case-insensitive), `cursor` is the offset of the next page. File › Import from Storage
  shows them as a searchable list.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import parse_qs, unquote

from _atlas_shared import data_folder, plain, setting

if TYPE_CHECKING:  # the contract, for editors and type checkers only
    from llmspace.plugin_api import Capabilities, ListItem, ListOptions, ListPage, ThreadLocator, ThreadStorageContext

_SEGMENT = re.compile(r"[\w][\w .-]{0,99}")
MAX_DEPTH = 8
MAX_BYTES = 16 * 1024 * 1024
PAGE_SIZE = 50


def library_folder(settings: Mapping[str, Any]) -> Path:
    configured = str(setting(settings, "libraryFolder", "")).strip()
    if not configured:
        return data_folder() / "library"
    path = Path(configured).expanduser()
    return path if path.is_absolute() else data_folder() / path


def clean_id(resource: str) -> str:
    """The library ID of a resource ID: query and fragment stripped, `%xx` decoded, validated."""
    path, _, query = str(resource).partition("?")
    path, _, _ = path.partition("#")
    revision = parse_qs(query.partition("#")[0]).get("revision", ["latest"])
    if revision != ["latest"]:
        raise ValueError(f"The Atlas library keeps only the latest revision (asked for {revision[0]!r}).")
    text = unquote(path)
    if text.startswith("/") or re.match(r"^[A-Za-z]:", text) or "\\" in text:
        raise ValueError(f"{text!r} is not a library ID: use a relative path such as project/alpha.")
    parts = text.rstrip("/").split("/")
    if not parts or len(parts) > MAX_DEPTH:
        raise ValueError(f"{text!r} is not a library ID: use 1 to {MAX_DEPTH} path segments.")
    for part in parts:
        if part in ("", ".", "..") or not _SEGMENT.fullmatch(part) or part.endswith((".", " ")):
            raise ValueError(f"{text!r} is not a library ID: {part!r} is not allowed "
                             "(letters, digits, spaces, '.', '_' and '-'; no empty, '.' or '..' parts).")
    return "/".join(parts)


def _file(library: Path, ident: str) -> Path:
    *folders, stem = ident.split("/")
    path = library.joinpath(*folders, stem + ".json")
    real_library = os.path.realpath(library)
    if not os.path.realpath(path).startswith(real_library.rstrip(os.sep) + os.sep):
        raise ValueError(f"{ident!r} leads outside the Atlas library.")
    return path


def _locator(ident: str, data: bytes) -> ThreadLocator:
    return {"id": ident, "version": hashlib.sha256(data).hexdigest()[:16], "filename": ident.rsplit("/", 1)[-1] + ".json"}


def _title(path: Path) -> str:
    """The thread's title, or "" when the file is too big, unreadable or not a thread."""
    try:
        if path.stat().st_size > MAX_BYTES:
            return ""
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return ""
    title = data.get("title") if isinstance(data, dict) else None
    return title if isinstance(title, str) else ""


def _slug(title: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.casefold()).strip("-")[:40].strip("-")
    return slug or "thread"


class AtlasLibraryStorage:
    display_name = "Atlas library"
    description = "Read and write threads as JSON files in a local library folder (see the libraryFolder setting)."
    deep_link_id = "atlas"
    capabilities: ClassVar[Capabilities] = {"read": True, "write": True}

    def resolve_latest(self, id: str, context: ThreadStorageContext) -> ThreadLocator:
        ident = clean_id(id)
        path = _file(library_folder(context.settings), ident)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise FileNotFoundError(f"No thread {ident!r} in the Atlas library ({path.parent}).") from None
        return _locator(ident, data)

    def read(self, locator: ThreadLocator, context: ThreadStorageContext) -> dict[str, Any]:
        ident = clean_id(str(locator.get("id", "")))
        path = _file(library_folder(context.settings), ident)
        if path.stat().st_size > MAX_BYTES:
            raise ValueError(f"{path.name} is larger than {MAX_BYTES} bytes.")
        try:
            thread = json.loads(path.read_bytes())
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path.name} is not valid JSON (line {exc.lineno}).") from None
        if not isinstance(thread, dict):
            raise ValueError(f"{path.name} does not hold a thread (a JSON object).")
        return thread

    def write(self, thread: Mapping[str, Any], id: str | None, context: ThreadStorageContext) -> ThreadLocator:
        if not isinstance(thread, Mapping):
            raise ValueError("A thread must be a JSON object.")
        if id:
            ident = clean_id(id)
        else:
            ident = f"inbox/{_slug(str(thread.get('title') or ''))}-{uuid.uuid4().hex[:8]}"
        library = library_folder(context.settings)
        library.mkdir(parents=True, exist_ok=True)
        path = _file(library, ident)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = (json.dumps(plain(thread), ensure_ascii=False, indent=2) + "\n").encode("utf-8")
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return _locator(ident, data)

    def list(self, context: ThreadStorageContext, options: ListOptions) -> ListPage:
        library = library_folder(context.settings)
        files = [p for p in library.rglob("*.json") if not any(part.startswith(".") for part in p.relative_to(library).parts)]
        files.sort(key=lambda p: (-p.stat().st_mtime, str(p)))
        query = (options.get("query") or "").casefold().strip()
        found: list[ListItem] = []
        for path in files:
            ident = path.relative_to(library).with_suffix("").as_posix()
            title = _title(path)
            if query and query not in ident.casefold() and query not in title.casefold():
                continue
            updated = datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat(timespec="seconds")
            found.append({"id": ident, "title": title or ident, "updatedAt": updated.replace("+00:00", "Z")})
        start = int(options.get("cursor") or 0)
        page: ListPage = {"items": found[start:start + PAGE_SIZE]}
        if start + PAGE_SIZE < len(found):
            page["nextCursor"] = str(start + PAGE_SIZE)
        return page
