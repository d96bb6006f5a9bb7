"""Presenters hold screen logic without Tk: importing them never imports tkinter."""

import subprocess
import sys


def test_presenters_do_not_import_tkinter():
    code = ("import sys, pkgutil, importlib, llmspace.presenters as p\n"
            "for m in pkgutil.iter_modules(p.__path__): importlib.import_module('llmspace.presenters.' + m.name)\n"
            "print('tkinter' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
