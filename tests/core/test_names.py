"""Text from outside that becomes or shows a name: bidi controls removed from new names,
escaped where names already on disk are shown; control characters removed from plugin text."""

from __future__ import annotations

import pytest

from llmspace.core.names import plain_text, shown_name, strip_bidi

BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def test_every_bidi_control_is_removed_from_a_new_name() -> None:
    assert strip_bidi(f"in{BIDI}voice") == "invoice"
    assert strip_bidi("résumé — 日本語 ‍👩‍💻") == "résumé — 日本語 ‍👩‍💻"  # ZWJ and other text stay


def test_a_name_on_disk_shows_bidi_and_control_characters_as_escapes() -> None:
    assert shown_name("invoice\u202egpj.exe") == "invoice\\u202Egpj.exe"
    assert shown_name(f"a{BIDI}b") == "a" + "".join(f"\\u{ord(c):04X}" for c in BIDI) + "b"
    assert shown_name("x\x1b]0;title\x07\x9b2J\x7f") == "x\\u001B]0;title\\u0007\\u009B2J\\u007F"
    assert shown_name("bad\udcffbyte") == "bad\\uDCFFbyte"  # a surrogate-escaped byte cannot be printed
    assert shown_name("notes/plan — v2") == "notes/plan — v2"


@pytest.mark.parametrize(("raw", "clean"), [
    ("\x1b]0;pwned\x07done", "]0;pwneddone"),
    ("\x1b[2J\x1b[Hcleared", "[2J[Hcleared"),
    ("c1 \x9b31m csi \x85 nel", "c1 31m csi  nel"),
    ("del\x7f nul\x00 bs\x08 cr\r", "del nul bs cr"),
    ("lines\nand\ttabs stay", "lines\nand\ttabs stay"),
    ("unicode ✓ stays \u202e", "unicode ✓ stays \u202e"),
])
def test_plain_text_removes_c0_c1_and_del_but_keeps_newlines_and_tabs(raw: str, clean: str) -> None:
    assert plain_text(raw) == clean
