"""`llmspace --self-test` from source on a fresh data root: settings load, the workspace is
listed (and seeded), replies render as Markdown with highlighted code, the main window opens
and closes, exit code 0."""

import subprocess
import sys


def test_self_test_passes_on_a_fresh_home(home):
    proc = subprocess.run([sys.executable, "-m", "llmspace", "--self-test"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "self-test: ok" in proc.stdout and "window: opened and closed" in proc.stdout
    assert "markdown: ok (tables, python/js/rust highlighted" in proc.stdout
    assert any((home / "workspace").glob("*.json"))
