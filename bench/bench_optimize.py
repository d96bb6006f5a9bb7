"""`llmspace optimize` end to end on the built-in engine: a bundled date-extraction task, run only
when asked (`LLMSPACE_BENCH_OPTIMIZE=1 python -m bench optimize`; a plain `make bench` skips it:
it takes tens of minutes on 2 cores).

The task: 72 customer messages, each naming the day an order was placed in one of six written
forms ("March 5, 2024", "5 March 2024", "2024/03/05", …); the case passes only when the reply is
exactly that day as YYYY-MM-DD (`equals`). The thread's vague seed prompt ("Tell me when the order
was placed.") gets sentences back, so it fails most cases; a rewrite that asks for the bare ISO
date can pass them. Target and reflector are the same model on the built-in engine: the largest
GGUF this machine has offline, Qwen2.5-Coder-0.5B-Instruct Q4_K_M (`.cache/models/`,
`python .ci/test_models.py`; the issue names the 1.5B, which no package here ships).

`LLMSPACE_BENCH_OPTIMIZE_MINUTES=M` bounds the search as `--max-minutes M` does (counted from the
start, the baseline included; the held-out gate still runs); `LLMSPACE_BENCH_OPTIMIZE_HOME=DIR`
keeps the data root (and the results folder) in DIR.

Reported: the original's validation pass rate; when a candidate was validated (so the gate ran),
the held-out pass rate of the original and of the best candidate and the exact McNemar p-value;
the verdict (1 promoted, 0 not), rollouts, reflector calls and wall time. Whatever the
verdict, the figures are the result ("no significant improvement" included).
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MODEL = Path(__file__).resolve().parent.parent / ".cache" / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
CASES = 72
SEED_PROMPT = "You read customer messages about orders. Tell me when the order was placed."
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
OPENINGS = ("Hello, I ordered a {item} on {date} and it has not arrived yet.",
            "My {item} (ordered {date}) came broken. What can you do?",
            "Hi! On {date} I bought a {item} from your shop; I would like to return it.",
            "Order placed {date}: one {item}. The tracking link does not work.",
            "I am writing about the {item} I paid for on {date}. Please send an invoice.",
            "We placed an order for a {item} on {date}, but we were charged twice.")
ITEMS = ("desk lamp", "kettle", "pair of boots", "phone case", "bookshelf", "rain jacket", "coffee grinder", "backpack")


def _written(rng: random.Random, y: int, m: int, d: int) -> str:
    month = MONTHS[m - 1]
    forms = (f"{month} {d}, {y}", f"{d} {month} {y}", f"{y}/{m:02d}/{d:02d}", f"{month[:3]} {d} {y}",
             f"the {d}{'th' if 10 <= d % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(d % 10, 'th')} of {month}, {y}",
             f"{d}.{m}.{y}")
    return rng.choice(forms)


def task_rows(n: int = CASES, seed: int = 7) -> list[dict[str, str]]:
    """The bundled dataset: `n` messages, each with the ISO date it names."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        y, m, d = rng.choice((2023, 2024, 2025)), rng.randint(1, 12), rng.randint(1, 28)
        text = rng.choice(OPENINGS).format(item=rng.choice(ITEMS), date=_written(rng, y, m, d))
        rows.append({"id": f"order-{i + 1}", "message": text, "expected": f"{y}-{m:02d}-{d:02d}"})
    return rows


def write_task(workspace: Path) -> Path:
    """The thread, the dataset and the evaluation file of the task in `workspace`; the file."""
    from llmspace.core.threadio import serialize_thread, thread_from_data

    workspace.mkdir(parents=True, exist_ok=True)
    thread = thread_from_data({"title": "order date", "model": {"provider": "local", "id": "qwen",
                                                               "params": {"temperature": 0, "maxTokens": 16}},
                               "context": {"systemPrompt": SEED_PROMPT, "messages": [
                                   {"id": "u1", "role": "user", "content": [{"type": "text", "text": "{{message}}"}]}]}})
    (workspace / "order-date.json").write_bytes(serialize_thread(thread))
    (workspace / "orders.jsonl").write_text("".join(json.dumps(r) + "\n" for r in task_rows()), encoding="utf-8")
    path = workspace / "order-date.eval.yaml"
    path.write_text("thread: order-date.json\ndataset: orders.jsonl\nmodels: [local/qwen]\nrepeat: 1\nconcurrency: 1\n"
                    "assert: [{type: equals}]\n", encoding="utf-8")
    return path


def run() -> list[tuple[str, float, str, float | None]]:
    if os.environ.get("LLMSPACE_BENCH_OPTIMIZE") != "1":
        print("bench_optimize: skipped (tens of minutes; LLMSPACE_BENCH_OPTIMIZE=1 python -m bench optimize runs it)")
        return []
    from llmspace.app import App
    from llmspace.local import engine
    from llmspace.local.engine_settings import EngineSettings, save
    from llmspace.local.models import LocalModels
    from llmspace.optimize.engine import Options, optimize
    from llmspace.paths import DataRoot

    try:
        engine.server_binary()
    except Exception as exc:
        print(f"bench_optimize: skipped: {exc}")
        return []
    if not MODEL.is_file():
        print(f"bench_optimize: skipped: {MODEL} is missing (python .ci/test_models.py)")
        return []
    keep = os.environ.get("LLMSPACE_BENCH_OPTIMIZE_HOME")  # keep the results folder there to read later
    minutes = os.environ.get("LLMSPACE_BENCH_OPTIMIZE_MINUTES")  # --max-minutes (from the start, the baseline included)
    with tempfile.TemporaryDirectory(prefix="llmspace-bench-optimize-") as tmp:
        home = Path(keep) if keep else Path(tmp)
        root = DataRoot(home)
        save(root, EngineSettings(context_size=4096, threads=0, idle_minutes=10))
        LocalModels(root).add(MODEL, name="qwen")
        eval_file = write_task(root.root / "workspace")
        app = App(root)
        t0 = time.monotonic()
        try:
            result = optimize(app.runner, Options(eval_file, reflector=("local", "qwen"), rollouts=150, seed=0,
                                                     max_minutes=float(minutes) if minutes else None),
                              on_progress=lambda s: print(s, file=sys.stderr), on_note=lambda s: print(s, file=sys.stderr))
        finally:
            app.close()
            engine.stop_engine(root)
        wall = time.monotonic() - t0
    s: dict[str, Any] = result.summary
    v = s.get("verdict") or {}
    print(f"bench_optimize: {v.get('reason', 'interrupted')}; best: {(s.get('best') or {}).get('text')!r}", file=sys.stderr)
    rows: list[tuple[str, float, str, float | None]] = [
        ("optimize: validation pass rate, original (0.5B)", round(100 * float(s.get("originalValidation") or 0), 1), "%", None)]
    if "pairs" in v:  # the held-out gate ran (a candidate was validated)
        pairs = int(v["pairs"]) or 1
        rows += [
            ("optimize: held-out pass rate, original", round(100 * int(v["passedOriginal"]) / pairs, 1), "%", None),
            ("optimize: held-out pass rate, best candidate", round(100 * int(v["passedCandidate"]) / pairs, 1), "%", None),
            ("optimize: held-out cases", pairs, "cases", None),
            ("optimize: exact McNemar p", float(v["mcnemarP"]), "", None)]
    rows += [
        ("optimize: promoted (1) or not (0)", int(bool(v.get("promoted"))), "", None),
        ("optimize: validated candidates", max(0, len(s.get("candidates") or []) - 1), "", None),  # less the original
        ("optimize: rollouts", int(s.get("rollouts") or 0), "cells", None),
        ("optimize: reflector calls", int(s.get("reflectorCalls") or 0), "calls", None),
        ("optimize: wall time (2 cores)", round(wall / 60, 1), "min", None),
    ]
    return rows
