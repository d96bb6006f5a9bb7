"""CLI command group `schema`: `llmspace schema thread` prints the Thread JSON Schema.

The schema is generated from the pydantic model (llmspace/core/schema.py).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..app import App


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `schema thread`."""
    parser = sub.add_parser("schema", help="print JSON Schemas of the file formats")
    parser.add_argument("kind", choices=["thread"], help="which schema (thread)")
    parser.set_defaults(handler=print_schema)


def print_schema(args: argparse.Namespace, app: App) -> int:
    from ..core.schema import schema_bytes

    sys.stdout.write(schema_bytes().decode("utf-8"))
    sys.stdout.flush()
    return 0
