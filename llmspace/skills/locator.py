"""Internal skill locators: `llm-space://internal/skills/<name>`.

"Open skill location" and links in the UI name a skill this way; `parse_skill_locator` is
strict (exact lowercase scheme, host `internal`, no user info, port, query or fragment,
exactly `/skills/<name>`, valid percent escapes, no encoded slashes, a valid skill name) and
`SkillManager.resolve_locator` turns a locator into the folder of the enabled skill.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote

from .skill import is_valid_skill_name

PREFIX = "llm-space://"
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def skill_locator(name: str) -> str:
    """The locator of a skill; raises ValueError for an invalid skill name."""
    if not is_valid_skill_name(name):
        raise ValueError(f"{name!r} is not a valid skill name")
    return f"{PREFIX}internal/skills/{quote(name, safe='')}"


def parse_skill_locator(url: str) -> str | None:
    """The skill name in a locator, or None when `url` is not a well-formed skill locator."""
    if not isinstance(url, str) or not url.startswith(PREFIX):
        return None
    rest = url[len(PREFIX):]
    if any(c in rest for c in "?#@\\"):
        return None
    authority, slash, path = rest.partition("/")
    if authority != "internal" or not slash:
        return None
    segments = path.split("/")
    if len(segments) != 2 or segments[0] != "skills" or not segments[1]:
        return None
    raw = segments[1]
    if _BAD_ESCAPE.search(raw) or re.search(r"%(2[fF]|5[cC])", raw):
        return None
    try:
        name = unquote(raw, errors="strict")
    except UnicodeDecodeError:
        return None
    return name if is_valid_skill_name(name) else None
