"""`initialize`: import each code file on its own, find its default export, instantiate it
and check the contract of its kind (`docs/plugin-protocol.md`, the table under `initialize`).

`prepare_path(root)` puts the plugin's `vendor/` and root first on `sys.path` and its
extension folders last (so helper modules such as `tools/_shared.py` import by name). `load(files)` returns
one `Extension` per file: active with its metadata, or failed at the `import`,
`constructor` or `contract` stage with a message and a traceback. One file's failure
touches no other; `calls.py` runs the loaded instances.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

from ..plugin_protocol import COMMAND, KINDS, THREAD_STORAGE, TOOL
from .plainjson import NotJSON, to_json

FOLDERS = ("tools", "commands", "thread-storages")
DEEP_LINK_ID = re.compile(r"^[a-z0-9._-]+$")
ALIASES = {"display_name": "displayName", "deep_link_id": "deepLinkId", "resolve_latest": "resolveLatest"}


class ContractError(Exception):
    """The default export does not meet its kind's contract."""


class Extension:
    """One code file: its instance, metadata and protocol methods, or why it failed."""

    __slots__ = ("error", "id", "instance", "kind", "metadata", "methods")

    def __init__(self, kind: str, ext_id: str) -> None:
        self.kind = kind
        self.id = ext_id
        self.instance: Any = None
        self.metadata: dict[str, Any] | None = None
        self.error: dict[str, str] | None = None
        self.methods: dict[str, Any] = {}
        """Protocol method name (`execute`, `resolveLatest`, `read`, `write`, `list`) → bound method."""

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.id}"

    def describe(self) -> dict[str, Any]:
        """The entry of the `initialize` answer."""
        entry: dict[str, Any] = {"kind": self.kind, "id": self.id}
        if self.error is None:
            entry.update(status="active", metadata=self.metadata)
        else:
            entry.update(status="failed", error=self.error)
        return entry


def prepare_path(root: Path) -> None:
    """`vendor/` then the root first on `sys.path`; the extension folders at its end."""
    front = [str(root / "vendor")] if (root / "vendor").is_dir() else []
    front.append(str(root))
    sys.path[:0] = [p for p in front if p not in sys.path]
    sys.path.extend(str(root / f) for f in FOLDERS if (root / f).is_dir() and str(root / f) not in sys.path)


def load(files: list[dict[str, Any]]) -> list[Extension]:
    loaded: list[Extension] = []
    seen: set[tuple[str, str]] = set()
    for index, entry in enumerate(files):
        kind, ext_id, path = entry.get("kind"), entry.get("id"), entry.get("path")
        ext = Extension(str(kind), str(ext_id))
        loaded.append(ext)
        if kind not in KINDS or not isinstance(ext_id, str) or not ext_id or not isinstance(path, str):
            ext.error = _failure("contract", f"not an extension file entry: {entry!r}")
        elif (kind, ext_id) in seen:
            ext.error = _failure("contract", f"a second {kind} with the id {ext_id!r}")
        elif Path(path).name.startswith("_"):
            ext.error = _failure("contract", f"{Path(path).name} is a helper (its name starts with _), not an extension")
        else:
            seen.add((kind, ext_id))
            _load_one(ext, Path(path), index)
    return loaded


def _load_one(ext: Extension, path: Path, index: int) -> None:
    try:
        module = _import(path, f"llmspace_plugin_{index}_{re.sub(r'[^0-9A-Za-z_]', '_', ext.id)}")
    except BaseException as exc:
        ext.error = _failure("import", _one_line(exc), _stack(exc))
        return
    try:
        cls = default_export(module)
    except ContractError as exc:
        ext.error = _failure("contract", str(exc))
        return
    try:
        ext.instance = cls()
    except BaseException as exc:
        ext.error = _failure("constructor", _one_line(exc), _stack(exc))
        return
    try:
        ext.metadata, ext.methods = CHECKS[ext.kind](ext.instance)
    except ContractError as exc:
        ext.error = _failure("contract", str(exc))
    except BaseException as exc:  # a property of the plugin's class raised
        ext.error = _failure("contract", _one_line(exc), _stack(exc))


def _import(path: Path, name: str) -> ModuleType:
    if path.suffix != ".py" or not path.is_file():
        raise ImportError(f"{path} is not a Python file")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def default_export(module: ModuleType) -> type:
    """The class bound to `default`, else the only class defined in the module."""
    if hasattr(module, "default"):
        export = module.default
        if not isinstance(export, type):
            raise ContractError(f"`default` must be a class (instantiated with no arguments), not {type(export).__name__}")
        return export
    own: list[type] = []
    for value in vars(module).values():
        if isinstance(value, type) and value.__module__ == module.__name__ and value not in own:
            own.append(value)
    if len(own) == 1:
        return own[0]
    if not own:
        raise ContractError("the file defines no class: define one, or bind the class to `default`")
    names = ", ".join(sorted(c.__name__ for c in own))
    raise ContractError(f"the file defines {len(own)} classes ({names}): bind the extension's class to `default`")


def _attr(instance: Any, name: str) -> Any:
    """`instance.name`, or its camelCase spelling; None when neither is there."""
    value = getattr(instance, name, None)
    if value is None and name in ALIASES:
        value = getattr(instance, ALIASES[name], None)
    return value


def _text(instance: Any, name: str, *, required: bool, non_empty: bool = False) -> str:
    value = _attr(instance, name)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (non_empty and not value.strip()):
        article = "a non-empty string" if non_empty else "a string"
        raise ContractError(f"`{name}` must be {article}, not {_show(value)}")
    return value


def _method(instance: Any, name: str, *, required: bool) -> Any:
    value = _attr(instance, name)
    if value is None and not required:
        return None
    if not callable(value):
        spelled = f"`{name}`" + (f" (or `{ALIASES[name]}`)" if name in ALIASES else "")
        raise ContractError(f"{spelled} must be a method, not {_show(value)}")
    return value


def _dispose(instance: Any) -> None:
    _method(instance, "dispose", required=False)


def _tool(instance: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    name = _text(instance, "name", required=True, non_empty=True)
    description = _text(instance, "description", required=True)
    parameters = _attr(instance, "parameters")
    if not hasattr(parameters, "get") or parameters.get("type") != "object":
        raise ContractError('`parameters` must be a JSON Schema object with "type": "object"')
    try:
        parameters = to_json(parameters)
    except NotJSON as exc:
        raise ContractError(f"`parameters` is not JSON: {exc}") from None
    strict = _attr(instance, "strict")
    if strict is not None and not isinstance(strict, bool):
        raise ContractError(f"`strict` must be true or false, not {_show(strict)}")
    execute = _method(instance, "execute", required=True)
    _dispose(instance)
    meta = {"name": name, "description": description, "parameters": parameters, "strict": bool(strict)}
    return meta, {"execute": execute}


def _command(instance: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    display = _text(instance, "display_name", required=True, non_empty=True)
    description = _text(instance, "description", required=False)
    execute = _method(instance, "execute", required=True)
    _dispose(instance)
    return {"displayName": display, "description": description}, {"execute": execute}


def _storage(instance: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    display = _text(instance, "display_name", required=True, non_empty=True)
    description = _text(instance, "description", required=False)
    caps = _attr(instance, "capabilities")
    if not hasattr(caps, "get"):
        raise ContractError('`capabilities` must be a dict like {"read": True, "write": False}')
    read, write = caps.get("read", False), caps.get("write", False)
    if not isinstance(read, bool) or not isinstance(write, bool):
        raise ContractError("`capabilities` read and write must be true or false")
    if not (read or write):
        raise ContractError("`capabilities` must allow read, write or both")
    methods: dict[str, Any] = {}
    if read:
        methods["resolveLatest"] = _method(instance, "resolve_latest", required=True)
        methods["read"] = _method(instance, "read", required=True)
    if write:
        methods["write"] = _method(instance, "write", required=True)
    listing = _method(instance, "list", required=False) if read else None  # optional: our extension
    if listing is not None:
        methods["list"] = listing
    link = _attr(instance, "deep_link_id")
    if link is not None:
        if not read:
            raise ContractError("`deep_link_id` is for readable storages only")
        if not isinstance(link, str) or not DEEP_LINK_ID.match(link):
            raise ContractError(f"`deep_link_id` must match ^[a-z0-9._-]+$, not {_show(link)}")
    _dispose(instance)
    meta = {"displayName": display, "description": description, "deepLinkId": link,
            "capabilities": {"read": read, "write": write, "list": listing is not None}}
    return meta, methods


CHECKS = {TOOL: _tool, COMMAND: _command, THREAD_STORAGE: _storage}


def _show(value: Any) -> str:
    if value is None:
        return "missing"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _stack(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc)).rstrip()


def _failure(stage: str, message: str, stack: str = "") -> dict[str, str]:
    return {"stage": stage, "message": message, "stack": stack}
