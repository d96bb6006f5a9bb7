"""Thread Storage deep links (plugin guide §11.1): `llm-space://threads/<deepLinkId>/<resource ID>`.

    link = parse_deep_link("llm-space://threads/team-library/project/alpha?revision=latest")
    link.storage_id, link.resource_id, link.dev   # "team-library", "project/alpha?revision=latest", False
    format_deep_link("team-library", "project/alpha", dev=True)  # "llm-space-dev://threads/team-library/project/alpha"

Rules:

- The scheme is `llm-space` (production) or `llm-space-dev` (development), in any case
  (`LLM-SPACE://…` is the same link); it must be followed by `//`. `DeepLink.scheme` is lowercase.
- The host is `threads` (any case); a user, a port or any other host is refused.
- The first path segment is the `deepLinkId` that picks the Storage. It must match
  `^[a-z0-9._-]+$` exactly: lowercase only, no percent-encoding.
- **The resource ID is everything after `<deepLinkId>/`, unchanged**: every further path
  segment, trailing slashes, the query string and a fragment (`#…`) too, with no
  percent-decoding (`a%2Fb` stays `a%2Fb`). Keeping the fragment follows the guide's
  "everything after": the Storage decides what it means and validates it (plugin guide §14).
- The resource ID may not be empty and must have something before its query or fragment:
  `…/team-library/`, `…/team-library?x=1` and `…/team-library/?x=1` are refused.
- Surrounding whitespace is ignored (pasted links); whitespace or control characters
  inside the link are refused (percent-encode them), as are links over 8 KiB.

Errors are `DeepLinkError` (a `UserFacingError`) naming the problem. Pure functions, no
I/O. Looking the `deepLinkId` up among the enabled readable Storages is
`llmspace/plugins/code/storages.py`'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...errors import UserFacingError

PRODUCTION_SCHEME = "llm-space"
DEV_SCHEME = "llm-space-dev"
SCHEMES = {PRODUCTION_SCHEME: False, DEV_SCHEME: True}
HOST = "threads"
MAX_LINK_CHARS = 8192
DEEP_LINK_ID = re.compile(r"[a-z0-9._-]+")
_BAD_CHAR = re.compile(r"[\s\x00-\x1f\x7f]")
_EXAMPLE = "llm-space://threads/<deepLinkId>/<resource ID>"


class DeepLinkError(UserFacingError):
    """A link that does not name a Thread Storage resource."""


@dataclass(frozen=True)
class DeepLink:
    """A parsed link: the lowercase `scheme`, the Storage's `deepLinkId` (`storage_id`),
    the resource ID exactly as it appeared, and whether it is a development link."""

    scheme: str
    storage_id: str
    resource_id: str
    dev: bool

    @property
    def url(self) -> str:
        """The link written out again (scheme and host lowercase)."""
        return f"{self.scheme}://{HOST}/{self.storage_id}/{self.resource_id}"


def valid_deep_link_id(text: object) -> bool:
    """True when `text` is a usable `deepLinkId`: lowercase letters, digits, `.`, `_`, `-`."""
    return isinstance(text, str) and DEEP_LINK_ID.fullmatch(text) is not None


def parse_deep_link(url: str) -> DeepLink:
    """The `DeepLink` of `url`, or `DeepLinkError` saying what is wrong with it."""
    text = url.strip()
    if not text:
        raise DeepLinkError("The link is empty.", hint=f"Links look like {_EXAMPLE}.")
    if len(text) > MAX_LINK_CHARS:
        raise DeepLinkError(f"The link is longer than {MAX_LINK_CHARS} characters.")
    bad = _BAD_CHAR.search(text)
    if bad is not None:
        raise DeepLinkError(f"The link contains a space or control character at position {bad.start() + 1}.",
                            hint="Percent-encode it (a space is %20).")
    scheme, sep, rest = text.partition(":")
    scheme = scheme.lower()
    if not sep or scheme not in SCHEMES:
        shown = f"{scheme!r}" if sep else "no scheme"
        raise DeepLinkError(f"Not an LLM Space link: {shown} (expected llm-space:// or llm-space-dev://).")
    if not rest.startswith("//"):
        raise DeepLinkError(f"Malformed link: {scheme}: must be followed by //.", hint=f"Links look like {_EXAMPLE}.")
    rest = rest[2:]
    end = len(rest)
    for mark in "/?#":
        at = rest.find(mark)
        if at != -1:
            end = min(end, at)
    host, rest = rest[:end], rest[end:]
    if host.lower() != HOST:
        raise DeepLinkError(f"Unsupported link target {host!r}: only {scheme}://{HOST}/… links open Threads.")
    if not rest.startswith("/") or rest == "/":
        raise DeepLinkError("The link names no Thread Storage.", hint=f"Links look like {_EXAMPLE}.")
    storage_id, slash, resource = rest[1:].partition("/")
    if not storage_id or "?" in storage_id or "#" in storage_id:
        before = re.split(r"[?#]", storage_id, maxsplit=1)[0]
        if valid_deep_link_id(before):
            raise DeepLinkError(f"The link names no resource after {before}/.", hint=f"Links look like {_EXAMPLE}.")
        raise DeepLinkError("The link names no Thread Storage.", hint=f"Links look like {_EXAMPLE}.")
    if not valid_deep_link_id(storage_id):
        raise DeepLinkError(f"{storage_id!r} is not a valid deepLinkId: use lowercase letters, digits, '.', '_' and '-'.")
    if not slash or not re.split(r"[?#]", resource, maxsplit=1)[0]:
        raise DeepLinkError(f"The link names no resource after {storage_id}/.", hint=f"Links look like {_EXAMPLE}.")
    return DeepLink(scheme, storage_id, resource, SCHEMES[scheme])


def format_deep_link(storage_id: str, resource_id: str, *, dev: bool = False) -> str:
    """The link that `parse_deep_link` reads back as (`storage_id`, `resource_id`). The
    resource ID is written as it is (percent-encode it first if it needs it)."""
    if not valid_deep_link_id(storage_id):
        raise DeepLinkError(f"{storage_id!r} is not a valid deepLinkId: use lowercase letters, digits, '.', '_' and '-'.")
    url = f"{DEV_SCHEME if dev else PRODUCTION_SCHEME}://{HOST}/{storage_id}/{resource_id}"
    parse_deep_link(url)  # the same checks as when it is opened
    return url
