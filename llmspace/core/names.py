"""Naming rules for workspace entries: which file stems and folder names are allowed, the
first free name in a folder, and how text from outside is made safe to name or show.

The rules (see `validate_stem`) keep names valid on Windows, macOS and Linux and keep them
usable as thread titles. Text from outside that becomes a name (imported file names,
storage locators) first loses its bidi controls (`strip_bidi`), so one name cannot look
like another; a name already on disk is shown with those and control characters as
`\\u202E`-style escapes (`shown_name`: the tree, tab titles and the CLI). `plain_text`
removes C0/C1 control characters and DEL (keeping newlines and tabs) from what plugins
send, so no plugin string can drive the terminal.
No threads, no network.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import InvalidName
from ..jsoncheck import printable

THREAD_SUFFIX = ".json"
_FORBIDDEN = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f]')
_MAX_NAME_BYTES = 200  # leaves room for `-12`, `_copy_2`, `.json` and the writer's temp names
_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)), *(f"lpt{i}" for i in range(1, 10))}
# Unicode's Bidi_Control characters: ALM, LRM, RLM, LRE/RLE/PDF/LRO/RLO, LRI/RLI/FSI/PDI
_BIDI = r"\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_BIDI_CONTROLS = re.compile(f"[{_BIDI}]")
_UNSHOWN = re.compile(rf"[\x00-\x1f\x7f-\x9f{_BIDI}\ud800-\udfff]")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # C0 but \t and \n, DEL, C1


def strip_bidi(text: str) -> str:
    """`text` without bidi controls (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069):
    applied to every name made from outside text, so `invoice\\u202egpj.exe` cannot pose as `…exe.jpg`."""
    return _BIDI_CONTROLS.sub("", text)


def shown_name(name: str) -> str:
    """A name (or workspace path) as the tree, tabs and CLI show it: bidi controls, control
    characters and undecodable bytes as `\\u202E`-style escapes, everything else as it is."""
    return _UNSHOWN.sub(lambda m: f"\\u{ord(m.group(0)):04X}", name)


def plain_text(text: str) -> str:
    """`text` without C0/C1 control characters and DEL, except newlines and tabs: what a
    plugin sends is passed through this before the terminal or Tk shows it."""
    return _CONTROLS.sub("", text)


def validate_stem(stem: str) -> str:
    """Check a file stem (or folder name) against the naming rules; returns it trimmed.

    Rules: not empty after trimming; not `.` or `..`; none of `< > : " / \\ | ? *` or
    control characters; not a Windows reserved name (`con`, `prn`, `aux`, `nul`,
    `com1`-`com9`, `lpt1`-`lpt9`, with or without an extension); must not end in `.` or a
    space. Also: must not start with `.` (such entries are hidden from the tree), must be
    valid Unicode (it becomes the thread title) and at most 200 bytes as UTF-8.
    Raises `InvalidName` with the reason.
    """
    if not isinstance(stem, str):
        raise InvalidName("A name must be text.")
    name = stem.strip()
    if not name:
        raise InvalidName("A name cannot be empty.", hint="Type a name.")
    if name in (".", ".."):
        raise InvalidName(f"{name!r} is not a valid name.", hint="Choose another name.")
    bad = _FORBIDDEN.search(name)
    if bad:
        ch = bad.group(0)
        shown = repr(ch) if ch.isprintable() else f"control character U+{ord(ch):04X}"
        raise InvalidName(f"{name!r} contains {shown}, which is not allowed in a name.",
                          hint='Remove any of < > : " / \\ | ? * and control characters.')
    if name.split(".")[0].lower() in _RESERVED:
        raise InvalidName(f"{name!r} is a reserved name on Windows.", hint="Choose another name.")
    if name.endswith("."):
        raise InvalidName(f"{name!r} must not end with a dot.", hint="Remove the trailing dot.")
    if name.startswith("."):
        raise InvalidName(f"{printable(name)!r} starts with a dot, so it would be hidden from the workspace.",
                          hint="Remove the leading dot.")
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidName(f"{printable(name)!r} is not valid Unicode text (it holds bytes that are not UTF-8).",
                          hint="Type the name again using ordinary characters.") from None
    if size > _MAX_NAME_BYTES:
        raise InvalidName(f"A name can be at most {_MAX_NAME_BYTES} bytes long; this one has {size} "
                          f"({name[:40]!r}…).", hint="Choose a shorter name.")
    return name


def unique_path(folder: Path, stem: str, suffix: str, sep: str = "-", first: int = 1) -> Path:
    """`stem+suffix`, else `stem-1`, `stem-2`, … (or `sep`/`first` as given) — the first free name."""
    candidate = folder / f"{stem}{suffix}"
    n = first
    while os.path.lexists(candidate):
        candidate = folder / f"{stem}{sep}{n}{suffix}"
        n += 1
    return candidate
