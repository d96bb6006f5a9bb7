"""macOS links (llmspace/ui/main.py `register_mac_links`): the Apple-event command Tk calls,
`::tk::mac::LaunchURL`, is defined on macOS only and opens each link from the event loop.
The Apple event itself is untested here (docs/release.md); this calls the Tcl command as Tk would."""

from __future__ import annotations

import tkinter

from llmspace.ui.main import register_mac_links


def test_on_macos_a_launch_url_event_opens_the_link_from_the_event_loop():
    interp = tkinter.Tcl()
    opened: list[str] = []
    assert register_mac_links(interp, opened.append, platform="darwin")
    interp.tk.call("::tk::mac::LaunchURL", "llm-space://threads/atlas/project/alpha")
    interp.tk.call("::tk::mac::LaunchURL", "https://example.com/not-ours")
    assert opened == []  # not inside the Apple event: after idle
    interp.update()
    assert opened == ["llm-space://threads/atlas/project/alpha"]


def test_elsewhere_no_command_is_defined():
    interp = tkinter.Tcl()
    assert not register_mac_links(interp, print, platform="linux")
    assert interp.tk.call("info", "commands", "::tk::mac::LaunchURL") == ""
