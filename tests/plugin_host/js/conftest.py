"""Fixtures of the JavaScript host tests: the runtime variant a test runs under and
`start_plugin`, which writes a plugin folder, starts the real host on it and initializes it.

`variant` runs a test under each runtime with its usual code files: Bun with .ts, the system
Node with .mjs, Node 22 with .ts. A module asks for other combinations with
`@pytest.mark.parametrize("variant", [...], indirect=True)` (see `ALL_SUFFIXES`). A runtime that
is not installed skips the test with the reason, locally; when the environment variable `CI`
is set it fails the test instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ..client import Handler, closing_starter, write_plugin
from .client import CODE_SUFFIXES, JsHostClient, Runtime, Variant, find_runtime

Started = tuple[JsHostClient, dict[str, dict[str, Any]]]

USUAL = [("bun", ".ts"), ("node", ".mjs"), ("node22", ".ts")]
ALL_SUFFIXES = [("bun", ".ts"), ("bun", ".js"), ("bun", ".mjs"), ("node", ".js"), ("node", ".mjs"), ("node22", ".ts")]
TYPESCRIPT = [("bun", ".ts"), ("node22", ".ts")]


def variant_id(param: tuple[str, str]) -> str:
    return f"{param[0]}{param[1].replace('.', '-')}"


def require(key: str) -> Runtime:
    """The runtime, else skip (locally) or fail (CI) with the reason."""
    found = find_runtime(key)
    if isinstance(found, str):
        if os.environ.get("CI"):
            pytest.fail(f"{found}; CI is set, so every runtime must be present")
        pytest.skip(found)
    return found


@pytest.fixture(params=USUAL, ids=variant_id)
def variant(request: pytest.FixtureRequest) -> Variant:
    key, suffix = request.param
    return Variant(require(key), suffix)


@pytest.fixture
def runtime(variant: Variant) -> Runtime:
    return variant.runtime


def with_suffix(files: dict[str, str], suffix: str) -> dict[str, str]:
    """`tools/echo` → `tools/echo.ts`; a name that has a suffix of its own keeps it."""
    named = {}
    for rel, text in files.items():
        has_own = Path(rel).suffix in (*CODE_SUFFIXES, ".py", ".json", ".txt", ".cjs")
        named[rel if has_own else rel + suffix] = text
    return named


@pytest.fixture
def start_host(variant: Variant, tmp_path: Path) -> Iterator[Callable[..., JsHostClient]]:
    """Start a host (not initialized); every host is closed after the test."""
    yield from closing_starter(lambda handler: JsHostClient(variant.runtime, tmp_path, handler))


@pytest.fixture
def start_plugin(variant: Variant, tmp_path: Path, start_host: Callable[..., JsHostClient]) -> Callable[..., Started]:
    """Write `files` (names without a suffix get the variant's) and start an initialized host."""

    def start(files: dict[str, str], handler: Handler | None = None) -> Started:
        root = write_plugin(tmp_path / "plugin", with_suffix(files, variant.suffix))
        client = start_host(handler)
        answer = client.initialize(root)
        return client, {f"{e['kind']}:{e['id']}": e for e in answer["extensions"]}

    return start
