"""Open a local HTML file in headless Chromium without a network and read what it shows.

    page = open_offline(path, tmp_path, fragment="status=error")   # -> Page(dom, console)
    page.dom                       # the DOM after the page's scripts ran (--dump-dom)
    page.console                   # every console message of the page: errors, CSP violations, logs

Chromium (Debian's `chromium`, installed by .ci/run) runs inside `unshare -n`, a network
namespace with no interface up, with a fresh profile and its background traffic off. Console
messages come from `--enable-logging=stderr --v=0` (`INFO:CONSOLE` lines, whatever their
level): a page that logs nothing has none. Messages of Chromium's own pages (`source:
chrome://…`, such as "Slow network is detected" on a loaded machine) are not the page's. Without chromium or unshare a test is skipped with
the reason locally and fails under CI (`CI` set).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

TIMEOUT_S = 120.0  # a loaded 2-core machine; a page opens in about 1 s when idle
_CONSOLE = re.compile(r":CONSOLE(?:\(\d+\)|:\d+)\] (.*)$", re.MULTILINE)
_BROWSER_SOURCE = re.compile(r", source: (?:chrome|chrome-extension|chrome-untrusted|devtools)://\S*( \(\d+\))?$")


@dataclass(frozen=True)
class Page:
    dom: str
    console: list[str]


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI installs it: .ci/run)")
    pytest.skip(reason)


def require_chromium() -> str:
    exe = shutil.which("chromium")
    if exe is None:
        _unavailable("chromium is not installed (apt-get install chromium)")
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-n", "true"], capture_output=True, timeout=30).returncode != 0:
        _unavailable("unshare -n (a network namespace) is not available here")
    assert exe is not None
    return exe


def open_offline(path: Path, scratch: Path, fragment: str = "") -> Page:
    exe = require_chromium()
    profile = scratch / f"chromium-profile-{len(list(scratch.glob('chromium-profile-*')))}"
    profile.mkdir(parents=True)
    url = path.resolve().as_uri() + (f"#{fragment}" if fragment else "")
    cmd = ["unshare", "-n", exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
           f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", "--dump-dom", url]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 0, f"chromium exited with {done.returncode}: {done.stderr[-3000:]}"
    return Page(done.stdout, [m for m in _CONSOLE.findall(done.stderr) if not _BROWSER_SOURCE.search(m)])
