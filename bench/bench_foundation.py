"""Foundation benchmarks: workspace listing, thread load/save, bulk import (medians).

- list a 10,000-thread workspace (titles from file names, nothing parsed): budget 0.2 s
- load + validate a 10 MB thread with images (through Workspace.open): budget 0.15 s
- save it atomically (changed content, so it is really written): budget 0.1 s
- import 1,000 OpenAI-style exports: files per second, no budget
Everything happens in a temporary folder that is removed afterwards.
"""

from __future__ import annotations

import gc
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from llmspace.core.importers import import_files
from llmspace.core.synthetic import big_thread_data
from llmspace.core.threadio import serialize_thread, thread_from_data
from llmspace.core.workspace import Workspace

RUNS = 7


def _median(fn: Callable[[], Any], runs: int = RUNS, setup: Callable[[], Any] | None = None) -> float:
    times = []
    for _ in range(runs):
        if setup is not None:
            setup()
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
        del result  # freeing what was built is not part of the figure
    return statistics.median(times)


def _make_tree(root: Path, threads: int = 10_000) -> None:
    body = b'{\n  "title": "x"\n}'
    for f in range(50):
        folder = root / f"project {f:02d}"
        folder.mkdir(parents=True)
        for s in range(4):
            (folder / f"sub{s}").mkdir()
    for i in range(threads):
        f, s = i % 50, (i // 50) % 5
        folder = root / f"project {f:02d}" / (f"sub{s}" if s < 4 else "")
        (folder / f"thread {i:05d}.json").write_bytes(body)


def _openai_export(i: int) -> bytes:
    return orjson.dumps({
        "model": "gpt-4.1",
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": f"Question number {i}: what is the weather in Paris?"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{i}", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
            {"role": "tool", "tool_call_id": f"call_{i}", "content": "18°C, cloudy"},
            {"role": "assistant", "content": "It is 18°C and cloudy in Paris."},
        ],
        "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather for a city",
                                                     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],
    })


def run() -> list[tuple[str, float, str, float | None]]:
    rows: list[tuple[str, float, str, float | None]] = []
    with tempfile.TemporaryDirectory(prefix="llmspace-bench-") as tmp:
        base = Path(tmp)
        # 1. list a 10,000-thread workspace
        tree_root = base / "tree"
        _make_tree(tree_root)
        ws = Workspace(tree_root, use_os_trash=False)
        count = sum(len(e.children or []) + sum(len(c.children or []) for c in e.children or []) for e in ws.list_tree())
        assert count >= 10_000, count
        rows.append(("list a 10,000-thread workspace", _median(ws.list_tree), "s", 0.2))

        # 2. load + validate a 10 MB thread; 3. save it atomically
        big_root = base / "big"
        big_root.mkdir()
        raw = serialize_thread(thread_from_data(big_thread_data()))
        (big_root / "big.json").write_bytes(raw)
        big_ws = Workspace(big_root, use_os_trash=False)
        rows.append((f"load + validate a {len(raw) / 1e6:.1f} MB thread", _median(lambda: big_ws.open("big.json")), "s", 0.15))
        thread = big_ws.open("big.json")
        counter = [0]

        def touch() -> None:
            counter[0] += 1
            thread.context.systemPrompt = f"changed {counter[0]}"

        def save() -> None:
            assert big_ws.save("big.json", thread)

        rows.append(("save the 10 MB thread atomically", _median(save, setup=touch), "s", 0.1))

        # 4. import 1,000 OpenAI-style exports
        src = base / "exports"
        src.mkdir()
        paths = []
        for i in range(1000):
            p = src / f"chat-{i:04d}.json"
            p.write_bytes(_openai_export(i))
            paths.append(p)
        times = []
        for r in range(3):
            imp_root = base / f"imported-{r}"
            imp_root.mkdir()
            imp_ws = Workspace(imp_root, use_os_trash=False)
            t0 = time.perf_counter()
            outcomes = import_files(paths, imp_ws)
            times.append(time.perf_counter() - t0)
            assert all(o.created for o in outcomes)
        rows.append(("import 1,000 OpenAI-style exports", 1000 / statistics.median(times), "files/s", None))
    return rows
