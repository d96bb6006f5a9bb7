"""First start: which API keys are in the environment and which local model servers answer
on their default ports. `detect_keys()` is instant; `probe_local_servers()` opens a TCP
connection per port with a short timeout and is meant for a background thread.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass

from ..local import catalog
from ..local.models import human_size

KEY_ENV: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "google": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "ark": ("ARK_API_KEY",),
}

LOCAL_SERVERS: tuple[tuple[str, str, int], ...] = (
    ("ollama", "Ollama", 11434),
    ("lmstudio", "LM Studio", 1234),
    ("llama.cpp", "llama.cpp server", 8080),
    ("vllm", "vLLM", 8000),
)


@dataclass(frozen=True)
class LocalServer:
    id: str
    name: str
    port: int
    base_url: str


def detect_keys(environ: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """`[(provider, env var)]` for every provider whose key is set (values never returned)."""
    env = os.environ if environ is None else environ
    found = []
    for provider, names in KEY_ENV.items():
        for name in names:
            if env.get(name, "").strip():
                found.append((provider, name))
                break
    return found


def probe_local_servers(host: str = "127.0.0.1", timeout: float = 0.25,
                        servers: tuple[tuple[str, str, int], ...] = LOCAL_SERVERS) -> list[LocalServer]:
    """Local servers accepting TCP connections on their default port (blocking; use a worker)."""
    out = []
    for sid, name, port in servers:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                out.append(LocalServer(sid, name, port, f"http://{host}:{port}/v1"))
        except OSError:
            continue
    return out


def detected_lines(keys: list[tuple[str, str]], local: list[LocalServer] | None,
                   default_model: tuple[str, str] | None, configured: Sequence[str] = ()) -> list[str]:
    """What the welcome view says about models: the default model, keys in the environment,
    providers set up in Settings › Models (`configured`: their names; so a working provider is
    never contradicted by 'No API keys found'), local servers, and what to do when nothing is
    available at all (the first-run sheet's ways, its local model first)."""
    lines = []
    if default_model is not None:
        lines.append(f"Default model: {default_model[0]}/{default_model[1]}.")
    if keys:
        lines.append("Providers detected: " + ", ".join(f"{p} (${v})" for p, v in keys))
    if configured:
        lines.append("Ready in Settings › Models: " + ", ".join(configured) + ".")
    if not keys and not configured:
        lines.append("No API keys found in the environment (OPENAI_API_KEY, ANTHROPIC_API_KEY, …).")
    if local is None:
        lines.append("Looking for local model servers…")
    elif local:
        lines.append("Local servers: " + ", ".join(f"{s.name} on port {s.port}" for s in local))
    else:
        lines.append("No local model server answered (Ollama 11434, LM Studio 1234, llama.cpp 8080, vLLM 8000).")
    if default_model is None and not keys and not configured and local == []:
        default = catalog.default_entry()  # what the first-run sheet offers first
        size = f"{human_size(default.size)} download, once" if default.size else "downloaded once"
        lines.append(f"To run a thread, click Configure models: run {default.name} on this computer ({size}), use "
                     "a GGUF file you have, or add an API key or a provider.")
    return lines
