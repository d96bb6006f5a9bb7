"""The agent layer: runs a thread against a model, executes its tools and records the run,
on a bounded worker pool. It receives the typed `RunServices` built by `app.py`, never the
App. Nothing runs on import.

Modules:
- `run_services.py`  `RunServices`, the services a run uses
- `runner.py`        `Runner`: `run` (blocking), `submit` (worker pool), `call_tools`
- `loop.py`          `RunSession`, the turn loop of one run
- `services.py`      the model stream with retries and traces, a run's traces (`RunTraces`), tool context, usage, history entry
- `convert.py`       stored thread -> provider-neutral request parts
- `fold.py`          one turn's stream events -> the stored assistant message
- `events.py`        `RunEvent`, what a run reports while it works
- `tool_calls.py`    tool calls a human starts outside a run
- `matrix.py`        matrix runs (models × variants × repeats)
- `report.py`        Markdown and HTML reports of a matrix run
"""
