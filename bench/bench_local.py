"""Built-in engine figures, on the real llama-server with Qwen2.5-Coder-0.5B-Instruct Q4_K_M.

- cold start to first token: the engine stopped, one one-sentence message, no tools, through
  the `local` provider (start of llama-server, model load, health check, prompt and the first
  token; budget 5 s on this 2-core machine);
- time to first token of the `general-agent` example (its system prompt, tools and message,
  through the run loop), the engine already running;
- tokens per second of one 128-token reply through our provider against llama-server driven
  directly (plain `requests`, same engine, same prompt, same seed) — the ratio should be ≥ 0.95,
  reported as the shortfall in % (budget 5);
- the engine's resident memory.

Needs the `local` extra and `.cache/models/` (`python .ci/test_models.py`); without them the
module says what is missing and reports nothing.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from llmspace.agent import events as rev
from llmspace.agent.run_types import RunOptions
from llmspace.app import App
from llmspace.cancel import CancelToken
from llmspace.core.examples import general_agent
from llmspace.core.model import ModelParams
from llmspace.local import engine
from llmspace.local.engine_settings import EngineSettings, save
from llmspace.local.models import LocalModels
from llmspace.local.provider import API, LOCAL_ID
from llmspace.paths import DataRoot
from llmspace.providers.base import ModelRequest, NeutralMessage
from llmspace.providers.events import Finish, TextDelta, UsageEvent

MODEL = Path(__file__).resolve().parent.parent / ".cache" / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
RUNS = 3
TOKENS = 128
LONG = "Write a detailed story of about 300 words about a lighthouse keeper."


def _request(app: App, text: str, max_tokens: int) -> ModelRequest:
    endpoint, info = app.providers.resolve(None, LOCAL_ID, "qwen")
    return ModelRequest(endpoint=endpoint, model=info, system_prompt="", messages=(NeutralMessage("user", text),),
                        params=ModelParams(maxTokens=max_tokens, temperature=0, extra={"seed": 0, "ignore_eos": True}))


def _first_token(app: App, text: str) -> float:
    t0 = time.perf_counter()
    for event in app.providers.adapter(API).stream(_request(app, text, 8), CancelToken()):
        if isinstance(event, TextDelta) and event.text:
            return time.perf_counter() - t0
    raise RuntimeError("no token")


def _ours(app: App, n: int) -> float:
    t0 = first = time.perf_counter()
    tokens = 0
    for event in app.providers.adapter(API).stream(_request(app, LONG, n), CancelToken()):
        if isinstance(event, TextDelta) and event.text and first == t0:
            first = time.perf_counter()
        if isinstance(event, UsageEvent):
            tokens = event.output
        if isinstance(event, Finish):
            break
    return (tokens - 1) / (time.perf_counter() - first)


def _direct(handle: engine.EngineHandle, n: int) -> float:
    import requests

    body: dict[str, Any] = {"model": "qwen", "messages": [{"role": "user", "content": LONG}], "stream": True,
                            "max_tokens": n, "temperature": 0, "seed": 0, "ignore_eos": True,
                            "stream_options": {"include_usage": True}}
    t0 = first = time.perf_counter()
    tokens = 0
    with requests.post(f"{handle.base_url}/chat/completions", json=body, stream=True, timeout=300,
                       headers={"Authorization": f"Bearer {handle.api_key}"}) as resp:
        resp.raise_for_status()
        for line in resp.iter_lines():
            if not line.startswith(b"data: ") or line == b"data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if chunk.get("usage"):
                tokens = chunk["usage"]["completion_tokens"]
            for choice in chunk.get("choices") or ():
                if (choice.get("delta") or {}).get("content") and first == t0:
                    first = time.perf_counter()
    return (tokens - 1) / (time.perf_counter() - first)


def _general_agent_ttft(app: App) -> float:
    first: list[float] = []
    cancel = CancelToken()
    t0 = time.perf_counter()

    def on_event(event: rev.RunEvent) -> None:
        if isinstance(event, (rev.TextDelta, rev.ToolCallDelta, rev.ThinkingDelta)) and not first:
            first.append(time.perf_counter() - t0)
            cancel.cancel()  # the first token is all this figure needs

    app.runner.run(general_agent(), RunOptions(provider=LOCAL_ID, model="qwen"), on_event=on_event, cancel=cancel)
    if not first:
        raise RuntimeError("the general-agent run produced no token")
    return first[0]


def run() -> list[tuple[str, float, str, float | None]]:
    try:
        engine.server_binary()
    except Exception as exc:
        print(f"bench_local: skipped: {exc}")
        return []
    if not MODEL.is_file():
        print(f"bench_local: skipped: {MODEL} is missing (python .ci/test_models.py)")
        return []
    with tempfile.TemporaryDirectory(prefix="llmspace-bench-local-") as home:
        root = DataRoot(Path(home))
        save(root, EngineSettings(context_size=8192, threads=0, idle_minutes=5))
        LocalModels(root).add(MODEL, name="qwen")
        app = App(root)
        try:
            cold = []
            for _ in range(RUNS):
                engine.stop_engine(root)
                cold.append(_first_token(app, "Say hello in one short sentence."))
            warm = [_first_token(app, "Say hello in one short sentence.") for _ in range(RUNS)]
            agent = [_general_agent_ttft(app) for _ in range(RUNS)]
            handle = engine.ensure_engine(root, LocalModels(root).resolve("qwen"))
            ours, direct = [], []
            for _ in range(RUNS):
                direct.append(_direct(handle, TOKENS))
                ours.append(_ours(app, TOKENS))
            status = engine.engine_status(root)
            rss = (status.rss_bytes or 0) / 1e6 if status else 0.0
        finally:
            app.close()
            engine.stop_engine(root)
    ratio = statistics.median(ours) / statistics.median(direct)
    return [
        ("local: cold start to first token (0.5B, median)", statistics.median(cold), "s", 5.0),
        ("local: first token, engine running (0.5B, median)", statistics.median(warm), "s", None),
        ("local: general-agent first token (0.5B, median)", statistics.median(agent), "s", None),
        ("local: tokens/s through our provider (median)", statistics.median(ours), "tok/s", None),
        ("local: tokens/s llama-server direct (median)", statistics.median(direct), "tok/s", None),
        ("local: provider/direct shortfall (ratio ≥ 0.95)", round((1 - ratio) * 100, 2), "%", 5.0),
        ("local: engine RSS (0.5B, 8k context)", round(rss, 1), "MB", None),
    ]
