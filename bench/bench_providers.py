"""Provider figures: SSE parsing + event building vs the official `openai` package.

Both clients consume the same recorded Chat Completions stream (N one-token chunks, one
SSE event per HTTP chunk) from the same loopback server (`tests/support/llm_server.py`):
our `OpenAICompletionsAdapter.stream` yielding `StreamEvent`s, and
`openai.OpenAI(...).chat.completions.create(stream=True)` yielding typed chunks. Reports
the median wall time of each, their ratio (ours / openai; target ≤ 1), and our own
per-chunk cost with no network (SSE parse + JSON + event building on the recorded bytes).
`openai` is a dev-only tool (`pip install -e .[dev]`); without it only our figures print.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

from llmspace.cancel import CancelToken
from llmspace.providers.base import Endpoint, ModelInfo, ModelRequest, NeutralMessage
from llmspace.providers.openai_completions import OpenAICompletionsAdapter, parse_stream
from llmspace.providers.sse import iter_sse

CHUNKS = 4000
RUNS = 5


def _recorded(n: int) -> list[bytes]:
    from tests.support.llm_server import Turn, _cc_events

    turn = Turn(text="tok " * (n // 1), chunk_size=4, usage=(100, n))
    return list(_cc_events(turn, {"model": "bench", "stream_options": {"include_usage": True}}))


def _median(fn: Callable[[], Any], runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run() -> list[tuple[str, float, str, float | None]]:
    from tests.support.llm_server import LoopbackLLM

    body = _recorded(CHUNKS)
    n = len(body)
    rows: list[tuple[str, float, str, float | None]] = []

    # offline: our parse + event building per chunk
    joined_pieces = body

    def offline() -> None:
        for _ in parse_stream(iter_sse(joined_pieces), CancelToken()):
            pass

    per_chunk_us = _median(offline) / n * 1e6
    rows.append((f"providers: SSE parse + events per chunk, offline ({n} chunks)", per_chunk_us, "µs", 20.0))
    rows += _other_apis()

    with LoopbackLLM() as srv:
        adapter = OpenAICompletionsAdapter()
        ep = Endpoint(provider_id="bench", api="openai-completions", base_url=srv.base_url, api_key="sk-bench-key-000")
        req = ModelRequest(endpoint=ep, model=ModelInfo(id="bench"), system_prompt="",
                           messages=(NeutralMessage(role="user", text="go"),))

        def ours() -> None:
            srv.push_raw(body=body, content_type="text/event-stream")
            text = 0
            for _event in adapter.stream(req, CancelToken()):
                text += 1
            assert text >= CHUNKS

        t_ours = _median(ours)
        rows.append((f"providers: our stream over loopback ({n} chunks)", t_ours * 1000, "ms", None))
        try:
            import openai
        except ImportError:
            return rows
        client = openai.OpenAI(base_url=srv.base_url, api_key="sk-bench-key-000", max_retries=0)

        def theirs() -> None:
            srv.push_raw(body=body, content_type="text/event-stream")
            count = 0
            stream = client.chat.completions.create(model="bench", messages=[{"role": "user", "content": "go"}], stream=True,
                                                    stream_options={"include_usage": True})
            for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    count += 1
            assert count >= CHUNKS

        theirs()  # warm up the client (imports, connection pool)
        t_theirs = _median(theirs)
        rows.append((f"providers: openai {openai.__version__} stream over loopback ({n} chunks)", t_theirs * 1000, "ms", None))
        rows.append(("providers: ours / openai (lower is better)", t_ours / t_theirs, "ratio", 1.0))
        rows.append(("providers: our wall time per chunk over loopback (server included)", t_ours / n * 1e6, "µs", None))
        client.close()
    return rows


def _other_apis() -> list[tuple[str, float, str, float | None]]:
    """Offline per-event cost of the Responses and Anthropic parsers on recorded streams."""
    from llmspace.providers import anthropic_messages, openai_responses
    from tests.support.llm_server import Turn, _an_events, _rs_events

    turn = Turn(text="tok " * CHUNKS, chunk_size=4, usage=(100, CHUNKS))
    rows: list[tuple[str, float, str, float | None]] = []
    for label, make, parse in (("responses", _rs_events, openai_responses.parse_stream),
                               ("anthropic", _an_events, anthropic_messages.parse_stream)):
        body = list(make(turn, {"model": "bench"}))

        def offline(parse: Callable[..., Any] = parse, body: list[Any] = body) -> None:  # bound now, not at call time
            for _ in parse(iter_sse(body), CancelToken()):
                pass

        rows.append((f"providers: {label} parse + events per chunk, offline ({len(body)} chunks)",
                     _median(offline) / len(body) * 1e6, "µs", 20.0))
    return rows
