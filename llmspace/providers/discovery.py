"""Local-server discovery: which models a key-less local server (Ollama, llama.cpp, LM Studio,
vLLM) offers right now, asked over HTTP at `GET {baseUrl}/models`.

    refresh_local(models, ["ollama"], timeout=0.5) -> {"ollama": True}   # reachability

The answer is handed to `ModelSettings.record_discovery`, which keeps it in memory and in
`data/local-models.json` (settings never make HTTP calls themselves). A server that does not
answer within `timeout` is simply unavailable. Wired by `app.py` (`ModelSettings.discoverer`)
and asked by the provider registry before it resolves a model of a local provider.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..settings.models import ModelSettings
    from ..settings.provider_entries import ProviderView

DISCOVERY_TIMEOUT = 1.0


def probe(view: ProviderView, timeout: float) -> list[str] | None:
    """The model ids the server of `view` lists, or None when it does not answer usefully."""
    import requests  # here, not at import time

    from .http import api_url, new_session

    try:
        with new_session() as session:  # a redirect to another origin is not followed
            resp = session.get(api_url(view.base_url, "/models"), headers=view.headers,
                               timeout=(timeout, timeout), proxies={"http": "", "https": ""})
            if not resp.ok:
                return None
            body = resp.json()
    except (requests.RequestException, ValueError):
        return None
    items = body.get("data") if isinstance(body, dict) else None
    if isinstance(body, dict) and items is None:
        items = body.get("models")  # Ollama's native shape
    if not isinstance(items, list):
        items = []
    return [str(i.get("id") or i.get("name")) for i in items if isinstance(i, dict)]


def refresh_local(models: ModelSettings, provider_ids: list[str] | None = None,
                  timeout: float = DISCOVERY_TIMEOUT) -> dict[str, bool]:
    """Ask the local servers (all, or those in `provider_ids`) for their models; record the
    answers in `models`; return provider id -> reachable."""
    found: dict[str, list[str] | None] = {}
    for view in models.providers():
        if view.local and (provider_ids is None or view.id in provider_ids):
            found[view.id] = probe(view, timeout)
    models.record_discovery(found)
    return {pid: ids is not None for pid, ids in found.items()}
