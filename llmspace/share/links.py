"""`llm-space://shared/<connector>/threads/<id>` links, and the import of the thread they name.

    is_shared_link("llm-space://shared/gist/threads/abc123")       # True: this unit opens it
    gist_id = parse_shared_link(url)                                 # "abc123", or SharedLinkError
    opened = import_shared_thread(data, file_name, url, workspace)   # into shared/, originalURL set

Links are routed by host: `shared` is this unit's, `threads` stays the plugin storages'
(`plugins/code/deeplink.py`). Only the connector `gist` is known, as in the original app; the
id is GitHub's (letters, digits, `-`, `_`): anything else, `../` included, is refused before a
request is made.

The import uses `llmspace import`'s rules (`core/importers`): the bytes are parsed by
`parse_import_detailed` (native, OpenAI-, Anthropic-style, Aurora); the new file's name has no
bidi controls and is made and checked by the workspace's naming rules, in `shared/` and nowhere
else; each thread whose templates or file variables would read local files when run gets the
same warning. Nothing is rendered or read while importing. The file is named as the original
names it: the title with `<>:"/\\|?*` as spaces, trailing dots and spaces dropped, 120 characters
at most (leading dots and spaces dropped too: a dot-name would be hidden from the tree); else
the gist file's stem; else `shared-thread`; `-1`, `-2`, … on collision; and `originalURL` keeps
the link. A shared thread's templates stay templates (the original renders
them when the thread is run, and sharing templates is the point): it is not marked `literal`
as a trace import is; the warning is what guards the files it would read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..core.importers import parse_import_detailed
from ..core.importers.foreign import ModelResolver
from ..core.names import strip_bidi, validate_stem
from ..core.templating.file_reads import local_file_reads
from ..core.workspace import Workspace
from ..errors import InvalidName, UserFacingError

SHARED_HOST = "shared"
SHARED_FOLDER = "shared"
CONNECTOR = "gist"
FALLBACK_STEM = "shared-thread"
TITLE_MAX = 120
_SCHEMES = ("llm-space", "llm-space-dev")
_GIST_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
_UNSAFE = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f]')
_EXAMPLE = "llm-space://shared/gist/threads/<gist id>"


class SharedLinkError(UserFacingError):
    """A `llm-space://shared/…` link this app cannot open."""


@dataclass
class OpenedShare:
    """A shared thread written into the workspace."""

    rel: str
    title: str
    gist_id: str
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _host_and_path(url: str) -> tuple[str, str, str] | None:
    text = url.strip()
    scheme, sep, rest = text.partition(":")
    if not sep or scheme.lower() not in _SCHEMES or not rest.startswith("//"):
        return None
    rest = rest[2:]
    cut = min([i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i != -1] or [len(rest)])
    return scheme.lower(), rest[:cut].lower(), rest[cut:]


def is_shared_link(url: str) -> bool:
    """True for `llm-space://shared/…` (and `llm-space-dev://shared/…`), in any case."""
    parts = _host_and_path(url)
    return parts is not None and parts[1] == SHARED_HOST


def parse_shared_link(url: str) -> str:
    """The gist id of a shared link, or `SharedLinkError` saying what is wrong."""
    parts = _host_and_path(url)
    if parts is None or parts[1] != SHARED_HOST:
        raise SharedLinkError("Not a shared-thread link.", hint=f"Shared links look like {_EXAMPLE}.")
    path = parts[2].split("?", 1)[0].split("#", 1)[0]
    segments = path.strip("/").split("/")
    if len(segments) != 3 or segments[1] != "threads" or not segments[0]:
        raise SharedLinkError("The shared link is malformed.", hint=f"Shared links look like {_EXAMPLE}.")
    connector, _, gist_id = segments
    if connector != CONNECTOR:
        raise SharedLinkError(f"Shared links of {connector[:40]!r} cannot be opened: only GitHub gist links ({_EXAMPLE}) are known.")
    if not _GIST_ID.fullmatch(gist_id):
        raise SharedLinkError("The shared link's gist id is not a GitHub gist id.", hint=f"Shared links look like {_EXAMPLE}.")
    return gist_id


def shared_link(gist_id: str) -> str:
    return f"llm-space://{SHARED_HOST}/{CONNECTOR}/threads/{gist_id}"


def shared_stem(title: str | None, file_name: str) -> str:
    """The file stem of an imported shared thread (see the module docstring)."""
    stem_of_file = file_name.rsplit("/", 1)[-1]
    if stem_of_file.lower().endswith(".json"):
        stem_of_file = stem_of_file[:-5]
    for candidate in (title or "", stem_of_file):
        text = strip_bidi(candidate)
        text = _UNSAFE.sub(" ", text)[:TITLE_MAX].rstrip(" .").lstrip(" .")  # a dot-name would be hidden
        if not text:
            continue
        try:
            return validate_stem(text)
        except InvalidName:
            continue
    return FALLBACK_STEM


def import_shared_thread(data: bytes, file_name: str, url: str, gist_id: str, workspace: Workspace,
                         resolve_model: ModelResolver | None = None) -> OpenedShare:
    """Write the thread in `data` into `shared/`; raises `SharedLinkError` when it holds none."""
    result = parse_import_detailed(data, file_name, resolve_model)
    if not result.threads:
        reason = result.skip or "; ".join(result.problems) or "no thread in it"
        raise SharedLinkError(f"The shared file is not a thread: {reason}.", hint="Ask for a new link.")
    thread = result.threads[0]
    thread.originalURL = url
    rel = workspace.create_thread(SHARED_FOLDER, shared_stem(thread.title, file_name), thread)
    opened = OpenedShare(rel, thread.title or "", gist_id, notes=list(result.problems))
    if len(result.threads) > 1:
        opened.notes.append(f"the shared file holds {len(result.threads)} threads; the first was imported")
    reads = local_file_reads(thread)
    if reads:
        opened.warnings.append(reads.describe(rel))
    return opened
