"""Entry script of the frozen executable (PyInstaller): the same dispatch as `python -m llmspace`
— no arguments open the desktop app, `--self-test` checks it, anything else is the CLI."""

import multiprocessing
import sys

from llmspace.__main__ import main

if __name__ == "__main__":
    multiprocessing.freeze_support()
    sys.exit(main())
