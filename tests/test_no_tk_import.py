"""Only `llmspace.ui` may import tkinter: every other module is imported in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = r"""
import importlib, pkgutil, sys
import llmspace
failed = []
names = []
for info in pkgutil.walk_packages(llmspace.__path__, "llmspace.", onerror=lambda name: failed.append(name)):
    if info.name == "llmspace.ui" or info.name.startswith("llmspace.ui."):
        continue
    if ".plugins.host" in info.name and info.name.endswith("__main__"):
        continue
    names.append(info.name)
    try:
        importlib.import_module(info.name)
    except Exception as exc:
        failed.append(f"{info.name}: {type(exc).__name__}: {exc}")
    if "tkinter" in sys.modules or "_tkinter" in sys.modules:
        print("TK", info.name)
        sys.exit(3)
print("IMPORTED", len(names))
if failed:
    print("FAILED", *failed, sep="\n")
    sys.exit(4)
"""


def test_no_module_outside_ui_imports_tkinter():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "IMPORTED" in done.stdout
