"""The trace workbench: production traces read from files become editable threads.

- `store.py` — trace projects on disk in the original app's layout
  (`traces/projects/<id>/project.json`, `traces/<key>/raw.json`, `trace.json`, `workbench.json`).
- `files.py` — which trace file a file is (three Langfuse shapes, OTLP JSON or JSON Lines,
  Phoenix span listings), size-capped, each refused file with its reason.
- `langfuse.py`, `otel.py` — each source's rows normalised to the one internal span shape of
  `spans.py`; `messages.py` reads the chat messages every source carries.
- `mapping.py` — the one mapping from spans to a thread.
- `workbench.py` — `trace/<projectId>/<traceKey>/workbench.json` as a workspace path, and
  "copy to workspace".

Reads and writes files under the data root's `traces/projects/`; no network, no threads.
"""
