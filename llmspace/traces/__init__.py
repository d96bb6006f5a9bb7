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
- `records.py` — trace.json, the summary record of one trace.
- `connect.py` — connected projects: connect, search and sync over `langfuse_api.py` (Langfuse's
  public API) and `phoenix_api.py` (Phoenix's REST API), both through `remote.py`'s bounded JSON
  GET (same-origin redirects only, timeouts, a size cap, errors naming key, project, URL or
  network). Keys live in the app's secret store (`llmspace/secrets.py`), never under `traces/`.

Reads and writes files under the data root's `traces/projects/`; the network only in
`connect.py` and the modules it calls, on the caller's thread.
"""
