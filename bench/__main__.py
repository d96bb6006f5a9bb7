"""Run every `bench/bench_*.py` module and print one table of figures.

Each module exposes `run() -> list[Row]` where a row is
`(name, value, unit, budget)` — `budget` is a number in the same unit or None.
A failing benchmark prints its error and the others still run; benchmarks never fail
the test suite. `python -m bench NAME...` runs only modules whose name contains NAME.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
import traceback
from pathlib import Path


def main(argv: list[str]) -> int:
    here = Path(__file__).parent
    sys.path.insert(0, str(here.parent))
    names = sorted(m.name for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))
    if argv:
        names = [n for n in names if any(a in n for a in argv)]
    rows: list[tuple[str, str, str, str, str]] = []
    for name in names:
        t0 = time.perf_counter()
        try:
            module = importlib.import_module(f"bench.{name}")
            for label, value, unit, budget in module.run():
                verdict = "" if budget is None else ("ok" if value <= budget else "OVER")
                rows.append((label, f"{value:,.3f}" if isinstance(value, float) else f"{value:,}", unit,
                             "" if budget is None else f"{budget:,}", verdict))
        except Exception:
            traceback.print_exc()
            rows.append((name, "error", "", "", "FAILED"))
        print(f"[{name}: {time.perf_counter() - t0:.1f} s]", file=sys.stderr)
    header = ("benchmark", "value", "unit", "budget", "")
    table = [header, *rows]
    widths = [max(len(r[i]) for r in table) for i in range(5)]
    for r in table:
        print("  ".join(c.ljust(w) if i in (0, 2, 4) else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
