"""The pure domain of LLM Space: the Thread file format, the workspace of thread files,
importers, prompt variables and rendering, run history, comparison and evaluation.

Nothing here does network I/O or starts threads; it imports only the foundation modules
(`errors`, `jsonio`, `jsoncheck`, `paths`, …). Every other layer may import it.

Modules:
- `model`: the Thread file format as pydantic models, built on `roundtrip` (`Node`: unknown
  keys and source key order kept, so files round-trip byte for byte); `schema`: its JSON
  Schema (`thread.schema.json` is the generated copy).
- `threadio`: thread bytes <-> `Thread` (image blobs packed and restored, bytes kept stable).
- `workspace`: thread files and folders under one root, built from `names` (naming rules,
  first free name), `tree` (listing from file names, stale temp files swept) and `trash`
  (moving entries, deleting to the trash).
- `examples`: the example threads; `synthetic`: generated threads for benchmarks and tests.
- `importers/`: foreign and native exports -> threads in the workspace.
- `templating/`: prompt variables and rendering — `variables`, `places`, `frozen_values`,
  `references` (editor hints), `builtin_formats`, `resolution` (values, file access),
  `render` (the texts a run sends; which texts are evaluated), `templates`, `sandbox` and
  `jinja_values` (the Jinja2 path and its limits), `file_reads` (which local files running a
  thread would read).
- `history`: run history; `usage`: token usage and cost; `timing`: speed and durations.
- `compare`: two runs side by side; `run_verdicts` and `run_verdict_records`: run verdicts
  (verdicts and rubric scores on two runs; the thread's `evaluations`) and rubrics.
"""
