"""UI code does work off the Tk thread only through `Pump.run_in_worker` (the App's worker
pool): no module under `llmspace/ui/` but `pump.py` creates a thread itself."""

from __future__ import annotations

import ast
from pathlib import Path

import llmspace.ui

UI = Path(llmspace.ui.__file__).parent


def _thread_creations(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
            if name in ("Thread", "Timer", "ThreadPoolExecutor", "start_new_thread"):
                found.append(f"{path.relative_to(UI.parent)}:{node.lineno} {name}(")
    return found


def test_no_ui_module_but_the_pump_starts_threads():
    offenders = [hit for path in sorted(UI.rglob("*.py")) if path.name != "pump.py"
                 for hit in _thread_creations(path)]
    assert offenders == [], "use Pump.run_in_worker instead: " + ", ".join(offenders)


def test_the_check_sees_a_raw_thread(tmp_path):
    sample = UI / "pump.py"
    assert _thread_creations(sample) == []  # the pump itself only submits to the pool
    bad = tmp_path / "bad.py"
    bad.write_text("import threading\nthreading.Thread(target=print).start()\n")
    assert len([n for n in ast.walk(ast.parse(bad.read_text())) if isinstance(n, ast.Call)
                and getattr(n.func, "attr", None) == "Thread"]) == 1
