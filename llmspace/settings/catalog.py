"""The built-in providers and their model catalogue (prices in USD per million tokens).

Read by `settings/models.py` (which applies the user's `models.json` on top) and shown by
`llmspace models`. Local providers (Ollama, llama.cpp, LM Studio, vLLM) need no key and
have no fixed catalogue: their models are discovered with `GET {baseUrl}/models`. `local`,
"Built-in (llama.cpp)", is the engine the app runs itself (`llmspace/local/provider.py`):
its models are the installed GGUF files.
Prices are list prices at the time of writing; users can override them with custom models.
"""

from __future__ import annotations

from dataclasses import dataclass

from .model_info import ModelInfo

KEYRING_SERVICE = "llm-space"


@dataclass(frozen=True)
class BuiltinProvider:
    id: str
    name: str
    api: str
    base_url: str
    env_var: str | None  # None = needs no key
    local: bool = False
    models: tuple[ModelInfo, ...] = ()
    website: str = ""


def _m(id: str, name: str, api: str, ctx: int, out: int, cin: float, cout: float, cread: float,
       cwrite: float = 0.0, reasoning: bool = False, image: bool = True) -> ModelInfo:
    return ModelInfo(id=id, name=name, api=api, reasoning=reasoning,
                     input=("text", "image") if image else ("text",), context_window=ctx, max_tokens=out,
                     cost_input=cin, cost_output=cout, cost_cache_read=cread, cost_cache_write=cwrite)


_R = "openai-responses"
_A = "anthropic-messages"
_C = "openai-completions"

OPENAI_MODELS = (
    _m("gpt-5", "GPT-5", _R, 400_000, 128_000, 1.25, 10.0, 0.125, reasoning=True),
    _m("gpt-5-mini", "GPT-5 mini", _R, 400_000, 128_000, 0.25, 2.0, 0.025, reasoning=True),
    _m("gpt-5-nano", "GPT-5 nano", _R, 400_000, 128_000, 0.05, 0.4, 0.005, reasoning=True),
    _m("gpt-4.1", "GPT-4.1", _R, 1_047_576, 32_768, 2.0, 8.0, 0.5),
    _m("gpt-4.1-mini", "GPT-4.1 mini", _R, 1_047_576, 32_768, 0.4, 1.6, 0.1),
    _m("gpt-4o", "GPT-4o", _R, 128_000, 16_384, 2.5, 10.0, 1.25),
    _m("gpt-4o-mini", "GPT-4o mini", _R, 128_000, 16_384, 0.15, 0.6, 0.075),
    _m("o3", "o3", _R, 200_000, 100_000, 2.0, 8.0, 0.5, reasoning=True),
    _m("o4-mini", "o4-mini", _R, 200_000, 100_000, 1.1, 4.4, 0.275, reasoning=True),
)

ANTHROPIC_MODELS = (
    _m("claude-sonnet-4-5", "Claude Sonnet 4.5", _A, 200_000, 64_000, 3.0, 15.0, 0.3, 3.75, reasoning=True),
    _m("claude-opus-4-1", "Claude Opus 4.1", _A, 200_000, 32_000, 15.0, 75.0, 1.5, 18.75, reasoning=True),
    _m("claude-haiku-4-5", "Claude Haiku 4.5", _A, 200_000, 64_000, 1.0, 5.0, 0.1, 1.25, reasoning=True),
    _m("claude-sonnet-4-0", "Claude Sonnet 4", _A, 200_000, 64_000, 3.0, 15.0, 0.3, 3.75, reasoning=True),
    _m("claude-3-5-haiku-latest", "Claude Haiku 3.5", _A, 200_000, 8_192, 0.8, 4.0, 0.08, 1.0),
)

BUILTINS: dict[str, BuiltinProvider] = {
    p.id: p
    for p in (
        BuiltinProvider("openai", "OpenAI", _R, "https://api.openai.com/v1", "OPENAI_API_KEY",
                        models=OPENAI_MODELS, website="https://platform.openai.com/api-keys"),
        BuiltinProvider("anthropic", "Anthropic", _A, "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY",
                        models=ANTHROPIC_MODELS, website="https://console.anthropic.com/settings/keys"),
        BuiltinProvider("ollama", "Ollama", _C, "http://127.0.0.1:11434/v1", None, local=True),
        BuiltinProvider("llama-cpp", "llama.cpp", _C, "http://127.0.0.1:8080/v1", None, local=True),
        BuiltinProvider("lm-studio", "LM Studio", _C, "http://127.0.0.1:1234/v1", None, local=True),
        BuiltinProvider("vllm", "vLLM", _C, "http://127.0.0.1:8000/v1", None, local=True),
        # The engine the app runs itself (llmspace/local/): its models are the installed GGUF files
        # and its address is known only once it runs, so the base URL is a placeholder.
        BuiltinProvider("local", "Built-in (llama.cpp)", "local-engine", "local://engine", None, local=True),
    )
}
