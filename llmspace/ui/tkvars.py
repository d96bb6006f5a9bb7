"""Tk variables that are safe to garbage-collect on any thread.

tkinter's `Variable.__del__` calls into Tcl; when Python's cycle collector happens to run
on a worker thread (a run, an MCP call) that raises "main thread is not in main loop".
These subclasses skip the Tcl cleanup off the main thread (the Tcl variable is tiny and
goes away with the interpreter).
"""

from __future__ import annotations

import threading
import tkinter as tk


def _on_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


class BooleanVar(tk.BooleanVar):
    def __del__(self) -> None:
        if _on_main_thread():
            super().__del__()


class StringVar(tk.StringVar):
    def __del__(self) -> None:
        if _on_main_thread():
            super().__del__()


class IntVar(tk.IntVar):
    def __del__(self) -> None:
        if _on_main_thread():
            super().__del__()


class DoubleVar(tk.DoubleVar):
    def __del__(self) -> None:
        if _on_main_thread():
            super().__del__()
