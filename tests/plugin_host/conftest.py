"""Fixtures of the plugin host tests.

`start_plugin` (the Python host): write a plugin folder into tmp_path, start a real host on
it and initialize it; every host is closed after the test.

`any_host` runs a test under every host the app has — the Python host and the JavaScript
host under Bun (.ts), the system Node (.mjs) and Node 22 (.ts), as tests/plugin_host/js
and tests/plugins/conformance name them — with `start_any_plugin(files)`, whose sources may
be a `Code(py=…, js=…)` giving each language its version of the same extension (names
without a suffix get the host's). A JavaScript runtime that is not installed skips (CI:
fails) its variants.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .client import Handler, HostClient, closing_starter, write_plugin
from .js.client import JsHostClient, Variant
from .js.conftest import USUAL, require, variant_id, with_suffix

Started = tuple[HostClient, dict[str, dict[str, Any]]]


@pytest.fixture
def start_python_host(tmp_path: Path) -> Iterator[Callable[..., HostClient]]:
    """Start a Python host (not initialized); every host is closed after the test."""
    yield from closing_starter(lambda handler: HostClient(tmp_path, handler))


@pytest.fixture
def start_plugin(tmp_path: Path, start_python_host: Callable[..., HostClient]) -> Callable[..., Started]:
    def start(files: dict[str, str], handler: Handler | None = None) -> Started:
        root = write_plugin(tmp_path / "plugin", files)
        client = start_python_host(handler)
        answer = client.initialize(root)
        return client, {f"{e['kind']}:{e['id']}": e for e in answer["extensions"]}

    return start


@dataclass(frozen=True)
class Code:
    """One extension's source in each language."""

    py: str
    js: str


@dataclass(frozen=True)
class AnyHost:
    """The host a test runs under: "python", or a JavaScript runtime with its file suffix."""

    variant: Variant | None

    @property
    def is_js(self) -> bool:
        return self.variant is not None

    @property
    def name(self) -> str:
        return "python" if self.variant is None else self.variant.runtime.key


HOSTS = [("python", ".py"), *USUAL]


@pytest.fixture(params=HOSTS, ids=variant_id)
def any_host(request: pytest.FixtureRequest) -> AnyHost:
    key, suffix = request.param
    return AnyHost(None if key == "python" else Variant(require(key), suffix))


@pytest.fixture
def start_any_host(any_host: AnyHost, tmp_path: Path) -> Iterator[Callable[..., HostClient]]:
    """Start a host of `any_host` (not initialized); every host is closed after the test."""
    variant = any_host.variant
    yield from closing_starter(lambda handler: HostClient(tmp_path, handler) if variant is None
                               else JsHostClient(variant.runtime, tmp_path, handler))


@pytest.fixture
def start_any_plugin(any_host: AnyHost, tmp_path: Path,
                     start_any_host: Callable[..., HostClient]) -> Callable[..., Started]:
    """Write `files` (a `Code` becomes the host's language; names without a suffix get the
    host's) into a fresh plugin folder and start an initialized host on it."""
    folders = iter(range(1, 1000))

    def start(files: dict[str, str | Code], handler: Handler | None = None) -> Started:
        lang = "js" if any_host.is_js else "py"
        chosen = {rel: getattr(text, lang) if isinstance(text, Code) else text for rel, text in files.items()}
        suffix = any_host.variant.suffix if any_host.variant is not None else ".py"
        root = write_plugin(tmp_path / f"plugin{next(folders)}", with_suffix(chosen, suffix))
        client = start_any_host(handler)
        answer = client.initialize(root)
        return client, {f"{e['kind']}:{e['id']}": e for e in answer["extensions"]}

    return start
