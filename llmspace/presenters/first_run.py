"""The first-run sheet's logic (no Tk): when Run (or the welcome page's "Configure models")
finds no usable model, which ways to get one the sheet offers — run the catalog's default
model locally (downloaded only on click), an installed local model, a GGUF file, a detected
Ollama / LM Studio / llama.cpp server, an API key — the download's progress text, and what a
choice does: it becomes the thread's model and the default model. In a checkout whose engine
`make run` is still building (`local/build_status.py`), the sheet says how long is left and
keeps the choices that need the engine closed (`engine_note`). The widgets are
`ui/first_run.py`.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal, Protocol

from ..errors import UserFacingError
from ..local import build_status, catalog
from ..local.build_status import BuildStatus
from ..local.catalog import CatalogEntry
from ..local.models import InstalledModel, human_size
from .local_models import LOCAL_PROVIDER as LOCAL_PROVIDER  # the built-in engine's provider
from .local_models import LocalModelsPresenter
from .welcome import LocalServer

Kind = Literal["download", "installed", "gguf", "server", "key"]

# welcome.LOCAL_SERVERS ids → the built-in providers of settings/catalog.py
SERVER_PROVIDERS = {"ollama": "ollama", "lmstudio": "lm-studio", "llama.cpp": "llama-cpp", "vllm": "vllm"}
NEEDS_ENGINE: frozenset[Kind] = frozenset({"download", "installed", "gguf"})


@dataclass(frozen=True)
class Option:
    kind: Kind
    label: str  # the button's text
    detail: str  # the line under it
    provider: str = ""
    model: str = ""  # the model id to use (installed: its name; download: the catalog name)
    enabled: bool = True  # False: it needs the built-in engine, which is not built yet


def engine_missing(engine: BuildStatus | None) -> bool:
    """The checkout's engine build has not (yet) installed the engine."""
    return engine is not None and engine.state != "ready"


def options(default: CatalogEntry, installed: Sequence[InstalledModel], servers: Sequence[LocalServer],
            keys: Sequence[tuple[str, str]], engine: BuildStatus | None = None) -> list[Option]:
    """The sheet's choices, in order: the local models (installed ones first, else the default
    model to download), a GGUF file, each detected server, an API key. While the engine's
    build (`engine`, a checkout's) has not installed it, the local ones are closed."""
    out = _options(default, installed, servers, keys)
    if engine_missing(engine):
        out = [replace(o, enabled=False) if o.kind in NEEDS_ENGINE else o for o in out]
    return out


def engine_note(engine: BuildStatus | None, now: float) -> str:
    """The line above the choices about the engine's build: how long is left, or why it is not
    there and what to do; "" when it is ready or nothing is being built."""
    if not engine_missing(engine):
        return ""
    assert engine is not None
    if engine.in_progress:
        return (f"The built-in engine is being built (about {engine.minutes_left(now)} min left). Running a model on "
                "this computer needs it — a download or a GGUF file too; a local model server or an API key does not.")
    without = "A local model server or an API key works without it."
    if engine.state == "failed":
        return (f"The built-in engine's build failed: {engine.message or 'see its log'} (log: {engine.log}). "
                f"Run `make run` again to retry. {without}")
    return (f"The built-in engine's build stopped before it finished (log: {engine.log}). Run `make run` again to "
            f"finish it. {without}")


class EngineBuild:
    """The engine build `make run` started in the background, as the sheet follows it: read from
    its status file (named in the environment) now and at each `poll()`."""

    def __init__(self) -> None:
        self.file = build_status.status_file()
        self.status = build_status.read(self.file)

    @property
    def missing(self) -> bool:
        return engine_missing(self.status)

    def note(self, now: float) -> str:
        return engine_note(self.status, now)

    def poll(self) -> bool:
        """Read the status again; True when its state changed (the choices are redrawn). When
        the engine has just been installed, the import system is told to look again (its
        package is new in site-packages, and is imported on first use: no restart)."""
        now = build_status.read(self.file)
        changed = (now.state if now else None) != (self.status.state if self.status else None)
        self.status = now
        if changed and not engine_missing(now):
            importlib.invalidate_caches()
        return changed


def choices(models: LocalModelsPresenter, servers: Sequence[LocalServer], keys: Sequence[tuple[str, str]],
            build: EngineBuild) -> list[Option]:
    """The sheet's choices for the data root of `models` (its installed models, the catalog's
    default model), the servers and keys detected and the engine's build."""
    return options(catalog.default_entry(), models.installed(), servers, keys, engine=build.status)


def _options(default: CatalogEntry, installed: Sequence[InstalledModel], servers: Sequence[LocalServer],
             keys: Sequence[tuple[str, str]]) -> list[Option]:
    out: list[Option] = []
    for m in installed:
        out.append(Option("installed", f"Run {m.name} locally", f"Installed, {human_size(m.size)}, {m.path}",
                          LOCAL_PROVIDER, m.name))
    if not any(m.name == default.name for m in installed):
        size = human_size(default.size) if default.size else "size unknown"
        out.append(Option("download", f"Run locally: download {default.name} ({size})",
                          f"{default.repo}, licence {default.licence}. Downloaded from the Hugging Face Hub when you "
                          "click; runs on this computer with the built-in engine (llama.cpp).",
                          LOCAL_PROVIDER, default.name))
    out.append(Option("gguf", "Use a GGUF file…", "A model file you already have (.gguf); it stays where it is.",
                      LOCAL_PROVIDER))
    for s in servers:
        provider = SERVER_PROVIDERS.get(s.id)
        if provider is not None:
            out.append(Option("server", f"Use {s.name} on port {s.port}", f"A model server running here ({s.base_url}).",
                              provider))
    keys_found = ", ".join(f"${v}" for _p, v in keys)
    out.append(Option("key", "Enter an API key…",
                      f"Keys found but not set up: {keys_found}." if keys_found
                      else "OpenAI, Anthropic, Gemini, OpenRouter, … (Settings › Models).", ""))
    return out


class ModelChoice(Protocol):
    """What the sheet changes: the default model (`app.models`)."""

    def set_default_model(self, provider_id: str, model_id: str) -> None: ...


class ThreadModel(Protocol):
    """The editor presenter of the thread to run."""

    def set_model(self, provider: str, model_id: str) -> None: ...


def adopt(settings: ModelChoice, thread: ThreadModel | None, provider: str, model_id: str) -> None:
    """The choice becomes the thread's model and the default model."""
    if not provider or not model_id:
        raise UserFacingError("Pick a model first.")
    settings.set_default_model(provider, model_id)
    if thread is not None:
        thread.set_model(provider, model_id)


def first_server_model(models: Sequence[str], server_name: str) -> str:
    """The model to use of a detected server (its first), or an error saying what to do."""
    if not models:
        raise UserFacingError(f"{server_name} answers but lists no models.",
                              hint="Download one there first (e.g. `ollama pull qwen2.5-coder:0.5b`), then try again.")
    return models[0]
