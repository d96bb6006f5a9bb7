"""Temp files a killed writer left in `settings/` are swept when the settings are first used,
as those in the workspace are when it is scanned; a temp file a live writer holds, and other
dot files, stay."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX writers lock their temp files")


def test_stale_temp_files_in_settings_are_swept_by_the_next_command_and_held_ones_stay(home: Path) -> None:
    settings = home / "settings"
    settings.mkdir()
    stale = [settings / n for n in (".models.json.abcd1234.tmp", ".plugins.json.k2j_x9a0.tmp", ".window.json.aaaaaaaa.tmp")]
    for path in stale:
        path.write_bytes(b'{"half": ')
    kept = [settings / n for n in (".keep", "notes.tmp", ".mcp.json.tmp")]
    for path in kept:
        path.write_bytes(b"mine")
    held = settings / ".skills.json.zzzz9999.tmp"
    held.write_bytes(b'{"being": ')
    fd = os.open(held, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as a writer in another process holds it while it writes
        done = subprocess.run([sys.executable, "-m", "llmspace", "plugins", "list"],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert [p.name for p in stale if p.exists()] == []
        assert all(p.exists() for p in kept) and held.exists()
    finally:
        os.close(fd)
