"""Local-server discovery lives in providers/ (settings make no HTTP calls) and is wired by app.py."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import llmspace.settings
from llmspace.core.model import ModelConfig
from llmspace.paths import DataRoot
from llmspace.providers.registry import ProviderRegistry
from llmspace.settings.models import ModelSettings
from tests.support.llm_server import LoopbackLLM


def _point_ollama_at(home: Path, url: str) -> None:
    path = home / "settings" / "models.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"providers": [{"id": "ollama", "baseUrl": url}]}), encoding="utf-8")


def test_no_settings_module_imports_an_http_client() -> None:
    folder = Path(llmspace.settings.__file__).parent
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n.split(".")[0] in ("requests", "httpx", "http") or n == "urllib.request"
                           for n in names), path.name


def test_settings_alone_ask_no_server_and_the_app_wires_the_discoverer(home: Path, app) -> None:
    with LoopbackLLM(models=["qwen3:8b"]) as srv:
        _point_ollama_at(home, srv.base_url)
        bare = ModelSettings(DataRoot(home))
        assert bare.refresh_local() == {}  # nothing asked: settings make no network calls
        assert bare.provider("ollama").models == []
        assert app.models.refresh_local(["ollama"]) == {"ollama": True}
        assert [m.id for m in app.models.provider("ollama").models] == ["qwen3:8b"]


def test_resolving_a_saved_local_model_asks_the_server_once_first(home: Path) -> None:
    with LoopbackLLM(models=["qwen3:8b"]) as srv:
        _point_ollama_at(home, srv.base_url)
        root = DataRoot(home)
        registry = ProviderRegistry(ModelSettings(root), root)
        endpoint, info = registry.resolve(ModelConfig(provider="ollama", id="qwen3:8b"))
        assert endpoint.provider_id == "ollama" and info.id == "qwen3:8b"
        assert registry.models.was_refreshed("ollama")
        assert (home / "data" / "local-models.json").exists()
