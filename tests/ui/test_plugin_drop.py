"""Dropping a plugin ZIP on the main window: the drop is delivered through tkdnd's own XDND
handlers (the procedures its X11 client-message code calls), with the file list offered on
the XdndSelection as a file manager would: the overlay shows while the drag is over the
window, and the ZIP installs in the background with a notification."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from tests.plugins.code_plugins import TEXT_TOOL

from .conftest import pump_until


def _zip(tmp_path: Path) -> Path:
    path = tmp_path / "drop kit.zip"  # a space, as file names have
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("drop-kit/package.json", '{"name": "drop-kit", "version": "2.0.0", "engines": {"llm-space": ">=4.9.0"}}')
        z.writestr("drop-kit/tools/plain.py", TEXT_TOOL)
    return path


def test_a_zip_dropped_on_the_window_installs_the_plugin(window, app, home, tmp_path):
    if not window.drops.enable():
        pytest.skip("tkdnd cannot load here")
    root = window.root
    tk = root.tk
    uri = _zip(tmp_path).as_uri() + "\r\n"
    provide = root.register(lambda offset, maxchars: uri[int(offset):int(offset) + int(maxchars)])
    tk.call("selection", "handle", "-selection", "XdndSelection", "-type", "text/uri-list", str(root), provide)
    tk.call("selection", "own", "-selection", "XdndSelection", str(root))
    source = root.winfo_id()
    root.update()
    x = root.winfo_rootx() + root.winfo_width() // 2
    y = root.winfo_rooty() + root.winfo_height() // 2
    target = str(window.right)  # the editor side of the window, inside the registered content area
    tk.call("::tkdnd::xdnd::HandleXdndEnter", target, source, ("text/uri-list",), 0)
    tk.call("::tkdnd::xdnd::HandleXdndPosition", target, x, y, 0, source)
    root.update()
    assert window.drops.label is not None and window.drops.label.winfo_ismapped()
    assert window.drops.label.cget("text") == "Drop plugin ZIP to install"
    tk.call("::tkdnd::xdnd::HandleXdndDrop", 0)
    root.update()
    assert not window.drops.label.winfo_ismapped()
    pump_until(root, lambda: any("Installed plugin drop-kit 2.0.0" in t for t in window.ui.toasts.messages()), timeout=60)
    assert app.plugins.get("drop-kit").status == "active"
