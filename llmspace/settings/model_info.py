"""What a model is, as the settings describe it: `ModelInfo` and the API names (`Api`).

Lives in `settings/` because the provider settings and the built-in catalogue describe
models; `providers/` (adapters, cost accounting) import it from here — imports only go
downward. Re-exported by `providers/base.py` for existing callers.
"""

from __future__ import annotations

from dataclasses import dataclass

# A model API name: a key of the `apis` registry (`providers/registry.py`); the built-ins are
# BUILTIN_APIS, plugins may register more, so any string is accepted here.
Api = str
BUILTIN_APIS = ("anthropic-messages", "openai-completions", "openai-responses")


@dataclass(frozen=True)
class ModelInfo:
    """One model of a provider, with what the adapters and cost accounting need."""

    id: str
    name: str = ""
    api: Api | None = None
    reasoning: bool = False
    input: tuple[str, ...] = ("text",)
    context_window: int | None = None
    max_tokens: int | None = None
    # USD per million tokens
    cost_input: float = 0.0
    cost_output: float = 0.0
    cost_cache_read: float = 0.0
    cost_cache_write: float = 0.0
