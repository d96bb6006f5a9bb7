"""CLI command group `history` (see llmspace/cli.py for the contract)."""

from __future__ import annotations

import argparse


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add this group's subcommands (none yet)."""
