"""CLI commands for plugin thread storages (see llmspace/cli.py for the contract):

  llmspace storage list                         active storages: ID, deepLinkId, read/write
  llmspace storage list-items STORAGE [--query Q] [--cursor C]   what a listing storage holds
  llmspace storage import STORAGE ID            import a thread into workspace/imported/
  llmspace storage save STORAGE THREAD [--id ID]   save a workspace thread, print the locator
  llmspace open-url URL                         import the thread of an llm-space:// link
                                                (llm-space://shared/… : a shared thread, into shared/)

STORAGE is the canonical ID (`plugin:<name>:thread-storage:<stem>`) or the `deepLinkId`.
Backed by llmspace/plugins/code/storages.py; Ctrl-C cancels the storage call.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from ..core.names import shown_name
from .parsers import help_handler

if TYPE_CHECKING:
    from ..app import App


def cmd_list(args: argparse.Namespace, app: App) -> int:
    app.plugins.records()
    storages = app.plugin_code.storages()
    if args.json:
        print(json.dumps([{"id": s.canonical_id, "displayName": s.display_name, "description": s.description,
                           "deepLinkId": s.deep_link_id, "read": s.can_read, "write": s.can_write, "list": s.can_list} for s in storages],
                         indent=2, ensure_ascii=False))
        return 0
    if not storages:
        print("No thread storages: install or enable a plugin that provides one (`llmspace plugins list`).")
        return 0
    for s in storages:
        caps = "/".join(c for c, ok in (("read", s.can_read), ("write", s.can_write), ("list", s.can_list)) if ok)
        link = f"  llm-space://threads/{s.deep_link_id}/…" if s.deep_link_id else ""
        print(f"{s.canonical_id}  [{caps}]  {s.display_name}{link}")
        if s.description:
            print(f"    {s.description}")
    return 0


def cmd_list_items(args: argparse.Namespace, app: App) -> int:
    from ..errors import UserFacingError
    from ..plugins.code.storages import find_storage, id_hint
    from .plugin_code import until_done

    app.plugins.records()
    storage = find_storage(app.plugin_code, args.storage, need="read")
    if not storage.can_list:
        raise UserFacingError(f"{storage.display_name} cannot list what it holds: import a thread by its ID "
                              f"(`llmspace storage import {args.storage} ID`).", hint=id_hint(storage))
    page = until_done(lambda cancel: storage.list_items(args.query or "", args.cursor, cancel))
    if args.json:
        print(json.dumps({"items": [{"id": i.id, "title": i.title, **({"updatedAt": i.updated_at} if i.updated_at else {})}
                                    for i in page.items], "nextCursor": page.next_cursor}, indent=2, ensure_ascii=False))
        return 0
    if not page.items:
        print(f"Nothing in {storage.display_name}" + (f" matches {args.query!r}." if args.query else "."))
    for item in page.items:
        print(f"{item.id}  {item.title}" + (f"  ({item.updated_at})" if item.updated_at else ""))
    if page.next_cursor:
        print(f"More: --cursor {page.next_cursor}")
    return 0


def cmd_import(args: argparse.Namespace, app: App) -> int:
    from ..plugins.code.storages import find_storage, import_thread
    from .plugin_code import until_done

    app.plugins.records()
    storage = find_storage(app.plugin_code, args.storage, need="read")
    rel = until_done(lambda cancel: import_thread(storage, args.id, app.workspace, cancel))
    print(f"Imported {shown_name(rel)}")
    return 0


def cmd_save(args: argparse.Namespace, app: App) -> int:
    from ..plugins.code.storages import find_storage
    from .plugin_code import until_done
    from .run import thread_path

    app.plugins.records()
    storage = find_storage(app.plugin_code, args.storage, need="write")
    rel = thread_path(app, args.thread)
    thread = app.workspace.open(rel)
    locator = until_done(lambda cancel: storage.write(thread, args.id, cancel))
    print(f"Saved {shown_name(rel)} to {storage.display_name}: {json.dumps(locator, ensure_ascii=False)}")
    return 0


def cmd_open_url(args: argparse.Namespace, app: App) -> int:
    from ..plugins.code.storages import open_deep_link
    from ..share import is_shared_link
    from .plugin_code import until_done

    if is_shared_link(args.url):  # routed by host: llm-space://shared/… is a shared thread (llmspace/share/)
        from .share import open_shared

        return open_shared(app, args.url)
    app.plugins.records()
    rel = until_done(lambda cancel: open_deep_link(app.plugin_code, args.url, app.workspace, cancel))
    print(shown_name(str(app.workspace.resolve(rel))))
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `storage …` and `open-url`."""
    p = sub.add_parser("storage", help="thread storages of plugins: list, list-items, import, save")
    ssub = p.add_subparsers(dest="storage_command", metavar="ACTION")
    p.set_defaults(handler=help_handler(p))
    q = ssub.add_parser("list", help="the active thread storages")
    q.add_argument("--json", action="store_true", help="print them as JSON")
    q.set_defaults(handler=cmd_list)
    q = ssub.add_parser("list-items", help="the threads a storage holds (storages that can list)")
    q.add_argument("storage", metavar="STORAGE", help="canonical ID or deepLinkId")
    q.add_argument("--query", metavar="Q", help="only threads matching Q (the storage decides how)")
    q.add_argument("--cursor", metavar="C", help="the next page (printed after a page as `More: --cursor C`)")
    q.add_argument("--json", action="store_true", help="print the page as JSON")
    q.set_defaults(handler=cmd_list_items)
    q = ssub.add_parser("import", help="import a thread into workspace/imported/")
    q.add_argument("storage", metavar="STORAGE", help="canonical ID or deepLinkId")
    q.add_argument("id", metavar="ID", help="the resource ID the storage knows the thread by")
    q.set_defaults(handler=cmd_import)
    q = ssub.add_parser("save", help="save a workspace thread to a storage")
    q.add_argument("storage", metavar="STORAGE", help="canonical ID or deepLinkId")
    q.add_argument("thread", metavar="THREAD", help="workspace path of the thread")
    q.add_argument("--id", metavar="ID", help="the resource ID to write to (default: the storage chooses)")
    q.set_defaults(handler=cmd_save)
    o = sub.add_parser("open-url", help="open an llm-space:// link (imports the thread it names)")
    o.add_argument("url", metavar="URL", help="llm-space://threads/<deepLinkId>/<resource ID>, or llm-space://shared/gist/threads/<id>")
    o.set_defaults(handler=cmd_open_url)
