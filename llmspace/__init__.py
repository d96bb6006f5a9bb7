"""LLM Space for Python: a desktop workbench for prompts and agents.

Importing this package starts nothing (no threads, no files, no Tk); `llmspace.app`
wires the services and `llmspace.cli` is the command-line front end.
"""

__version__ = "0.1.0"
