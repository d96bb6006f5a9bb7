"""A thread as a secret gist, and a gist back to thread bytes, in the original app's format.

    payload = gist_payload(thread, title="Quiz", description=None)
    # {"description": "Quiz", "public": False, "files": {"quiz.json": {"content": "<thread JSON>"}}}
    name, data = gist_thread_file(gist_json, api, token=None, cancel=cancel)

Writing (the original's `gist-thread-writer`): the title override is applied, `runHistory` is
emptied (`[]`), the file is slug(title) + `.json` (lowercase, each run of characters that are not
letters or digits becomes `-`, 60 characters at most) or `thread.json`, the description is the
one given (even an empty one) else the title, and the content is the thread as the original
serialises it (2-space JSON, images inline: a gist holds one file, so no `blobs` table).

Reading (its `gist-thread-reader`): the first `*.json` file, else the first file; its inline
`content`, or when GitHub marks it `truncated` (over about 1 MB) the `raw_url`, fetched without
the token (another origin, `gist.githubusercontent.com`). Either is capped at `MAX_THREAD_BYTES`
(20 MB): a 10 MB thread opens, a 50 MB file is refused.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from ..cancel import CancelToken
from ..core.model import Thread
from ..core.threadio import clone_thread, thread_to_data
from ..jsonio import dumps_pretty
from .github import GitHubError, bounded_call

MAX_THREAD_BYTES = 20 * 1024 * 1024
SLUG_MAX = 60
FALLBACK_FILE = "thread.json"
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def slug(title: str) -> str:
    """`My Quiz: v2!` -> `my-quiz-v2` (60 characters at most; empty when nothing is left)."""
    return _NOT_ALNUM.sub("-", title.lower()).strip("-")[:SLUG_MAX].strip("-")


def gist_file_name(title: str) -> str:
    stem = slug(title)
    return f"{stem}.json" if stem else FALLBACK_FILE


def shared_thread(thread: Thread, title: str | None = None) -> Thread:
    """The thread as it is shared: a copy with the title override and no run history."""
    copy = clone_thread(thread)
    if title is not None and title.strip():
        copy.title = title.strip()
    copy.runHistory = []
    return copy


def gist_content(thread: Thread) -> str:
    return dumps_pretty(thread_to_data(thread)).decode("utf-8")


def gist_payload(thread: Thread, title: str | None = None, description: str | None = None) -> dict[str, Any]:
    """The body of `POST /gists` for `thread` (see the module docstring)."""
    shared = shared_thread(thread, title)
    shown_title = shared.title or ""
    return {"description": description if description is not None else shown_title, "public": False,
            "files": {gist_file_name(shown_title): {"content": gist_content(shared)}}}


def _first_file(gist: Any, gist_id: str) -> tuple[str, dict[str, Any]]:
    files = gist.get("files") if isinstance(gist, dict) else None
    entries = [(str(name), f) for name, f in files.items() if isinstance(f, dict)] if isinstance(files, dict) else []
    if not entries:
        raise GitHubError(f"Gist {gist_id} holds no file, so no thread.", hint="Ask for a new link.")
    for name, f in entries:
        if str(f.get("filename") or name).lower().endswith(".json"):
            return str(f.get("filename") or name), f
    name, f = entries[0]
    return str(f.get("filename") or name), f


def gist_thread_file(gist: Any, gist_id: str, cancel: CancelToken | None = None) -> tuple[str, bytes]:
    """(file name, bytes) of the thread file of a `GET /gists/<id>` answer."""
    name, entry = _first_file(gist, gist_id)
    size = entry.get("size")
    if isinstance(size, int) and size > MAX_THREAD_BYTES:
        raise GitHubError(f"The shared file {name!r} is {size / (1024 * 1024):.0f} MB; threads over "
                          f"{MAX_THREAD_BYTES // (1024 * 1024)} MB are not opened.", hint="Ask for a smaller thread.")
    content = entry.get("content")
    if isinstance(content, str) and not entry.get("truncated"):
        data = content.encode("utf-8", "surrogatepass")
        if len(data) > MAX_THREAD_BYTES:
            raise GitHubError(f"The shared file {name!r} is over {MAX_THREAD_BYTES // (1024 * 1024)} MB; not opened.")
        return name, data
    raw_url = entry.get("raw_url")
    if not isinstance(raw_url, str) or urlsplit(raw_url).scheme.lower() not in ("http", "https"):
        raise GitHubError(f"GitHub gave the shared file {name!r} neither its content nor a usable raw_url.")
    # Another origin (gist.githubusercontent.com): the token is never sent there.
    status, _, body = bounded_call("GET", raw_url, accept="*/*", max_bytes=MAX_THREAD_BYTES, cancel=cancel,
                                   what="GitHub's raw gist file")
    if status >= 400:
        raise GitHubError(f"The shared file {name!r} could not be downloaded (HTTP {status}).", status=status,
                          hint="Try again later.")
    return name, body
