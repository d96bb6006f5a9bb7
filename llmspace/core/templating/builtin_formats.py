"""Value formatters of the built-in variable types: the `current_date` text and the
`available_skills` list (Markdown or XML), exactly as the original app writes them.

Pure apart from reading the local time zone's name; no network, no threads.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import datetime
from typing import Any

_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def format_current_date(fmt: str, now: datetime | None = None) -> str:
    """`readable-date` → `YYYY-MM-DD, Weekday`; `iso-date`; `local-date-time` with offset and zone."""
    now = now or datetime.now().astimezone()
    if now.tzinfo is None:
        now = now.astimezone()
    date = now.strftime("%Y-%m-%d")
    if fmt == "iso-date":
        return date
    if fmt == "local-date-time":
        offset = now.utcoffset()
        minutes = int(offset.total_seconds() // 60) if offset is not None else 0
        sign = "+" if minutes >= 0 else "-"
        minutes = abs(minutes)
        return f"{date} {now.strftime('%H:%M:%S')} GMT{sign}{minutes // 60:02d}:{minutes % 60:02d} ({_zone_name(now)})"
    return f"{date}, {_WEEKDAYS[now.weekday()]}"


def _zone_name(now: datetime) -> str:
    key = getattr(now.tzinfo, "key", None)  # zoneinfo.ZoneInfo
    if isinstance(key, str):
        return key
    try:
        tz = os.environ.get("TZ", "").lstrip(":")
        if tz and "/" in tz:
            return tz
        link = os.path.realpath("/etc/localtime")
        if "zoneinfo/" in link:
            return link.split("zoneinfo/", 1)[1]
    except OSError:
        pass
    return now.tzname() or "local"


def _one_line(text: str) -> str:
    return " ".join(str(text or "").split()) or "No description"


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def format_skills(skills: Iterable[Any], fmt: str, indent: int = 0) -> str:
    """The `available_skills` text for skills with `name`, `description`, `path`."""
    items = list(skills)
    if fmt == "xml":
        lines = ["<available-skills>"]
        for s in items:
            lines.append(f'<skill name="{_xml(s.name)}" path="{_xml(str(s.path))}">')
            lines.append(_xml(_one_line(s.description)))
            lines.append("</skill>")
        lines.append("</available-skills>")
        text = "\n".join(lines)
    else:
        text = "\n\n".join(f"- **{s.name.replace('`', chr(92) + '`')}**: {_one_line(s.description)}" for s in items)
    if indent in (2, 4):
        text = "\n".join(" " * indent + line for line in text.split("\n"))
    return text
