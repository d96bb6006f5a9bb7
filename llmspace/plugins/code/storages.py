"""Thread storages as the app uses them: find one, import a thread from it into
`workspace/imported/`, save a thread to it, and open `llm-space://` deep links.

    storage = find_storage(app.plugin_code, "team-library")   # canonical ID or deepLinkId
    rel = import_thread(storage, "project/alpha?revision=latest", app.workspace)
    page = storage.list_items(query="alpha") if storage.can_list else None   # else id_hint(storage)
    locator = storage.write(thread, None)
    rel = open_deep_link(app.plugin_code, "llm-space://threads/atlas/project/alpha", app.workspace)

The imported file is named after the locator's `filename`, else the thread's title, else
the last part of the resource ID — the first that is a valid name on every OS, without bidi
controls — made unique in `imported/`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ...cancel import CancelToken
from ...core.names import strip_bidi, validate_stem
from ...errors import InvalidName, UserFacingError
from .calls import PluginStorage
from .deeplink import parse_deep_link

if TYPE_CHECKING:
    from ...core.workspace import Workspace
    from .plugin_code import PluginCode

IMPORT_FOLDER = "imported"
_UNSAFE = re.compile(r'[\\/:*?"<>|\x00-\x1f\x7f]+')


def find_storage(code: PluginCode, key: str, *, need: str | None = None) -> PluginStorage:
    """The active storage whose canonical ID or `deepLinkId` is `key`."""
    code.ensure_loaded()
    storages = code.storages()
    found = next((s for s in storages if key in (s.canonical_id, s.deep_link_id)), None)
    if found is None:
        known = ", ".join(f"{s.canonical_id}" + (f" ({s.deep_link_id})" if s.deep_link_id else "")
                          for s in storages) or "none"
        raise UserFacingError(f"No active thread storage {key!r}.",
                              hint=f"Active storages: {known}. See `llmspace storage list`.")
    if need == "read" and not found.can_read:
        raise UserFacingError(f"{found.display_name} cannot import threads (it is write-only).")
    if need == "write" and not found.can_write:
        raise UserFacingError(f"{found.display_name} cannot save threads (it is read-only).")
    return found


def id_hint(storage: PluginStorage) -> str:
    """What a resource ID of this storage looks like, for a storage that cannot list: its
    description, and the part of its `llm-space://` links an ID is."""
    parts = [f"The ID {storage.display_name} knows the thread by"]
    if storage.deep_link_id:
        parts.append(f" (what follows llm-space://threads/{storage.deep_link_id}/ in a link)")
    text = "".join(parts) + "."
    return f"{storage.description.rstrip('.')}. {text}" if storage.description else text


def file_stem(locator: dict[str, Any], title: str, resource_id: str) -> str:
    """The stem of an imported thread's file: the first of the locator's `filename`, the
    thread's title and the resource ID's last part that makes a valid name on every OS
    (bidi controls removed, unsafe characters replaced), else `imported-thread`."""
    for candidate in (locator.get("filename"), title, resource_id.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]):
        if isinstance(candidate, str) and candidate.strip():
            stem = strip_bidi(candidate).strip().rsplit("/", 1)[-1]
            if stem.lower().endswith(".json"):
                stem = stem[:-5]
            stem = _UNSAFE.sub("-", stem).strip(" .-")[:100]
            try:
                return validate_stem(stem)  # `CON`, `lpt1.txt`, …: reserved on Windows, so never used
            except InvalidName:
                continue
    return "imported-thread"


def import_thread(storage: PluginStorage, resource_id: str, workspace: Workspace,
                  cancel: CancelToken | None = None) -> str:
    """Resolve, read and save the thread; returns its workspace path under `imported/`."""
    if not resource_id:
        raise UserFacingError("The resource ID is empty.", hint=f"Give the ID {storage.display_name} knows the thread by.")
    locator = storage.resolve_latest(resource_id, cancel)
    thread = storage.read(locator, cancel)
    return workspace.create_thread(IMPORT_FOLDER, file_stem(locator, thread.title or "", resource_id), thread)


def open_deep_link(code: PluginCode, url: str, workspace: Workspace, cancel: CancelToken | None = None) -> str:
    """Import the thread a `llm-space://threads/<deepLinkId>/<id>` link names (links are routed
    by host: `llm-space://shared/…` is a shared thread, imported into `shared/` by `llmspace/share/`)."""
    from ...share import is_shared_link, open_shared_link

    if is_shared_link(url):
        return open_shared_link(code.root.settings, url, workspace, cancel).rel
    link = parse_deep_link(url)
    code.ensure_loaded()
    storage = next((s for s in code.storages() if s.deep_link_id == link.storage_id), None)
    if storage is None:
        raise UserFacingError(f"No enabled thread storage handles {link.storage_id!r} links.",
                              hint="Install or enable the plugin that provides it (`llmspace storage list`).")
    return import_thread(storage, link.resource_id, workspace, cancel)
