"""Screen logic without Tk: the state and intents behind each view of `llmspace.ui`, so
that what the app does can be tested without a display. Never imports tkinter (a test
checks); presenters reach services through the `App` or the objects they are given.

Modules:
- `tree` — the workspace tree: entries, expanded folders, new/rename/duplicate/move/delete/import.
- `tabs` — open thread tabs: order, active tab, reopen stack.
- `state` — the persisted UI state (`settings/window.json`, `settings/ui-state.json`).
- `editor` — one open thread: working copy, header/model/tools/variables/prompt intents,
  undo/redo, saving; composed with `messages` (message intents, drag and drop) and `history`
  (run-history intents); `variable_forms` (the Variables dialog's checks and save).
- `variable_assist` — `{{var}}` highlighting spans, the `{{` completion, the hover value.
- `thumbnails` — message image thumbnails: decoding with Pillow, a cache.
- `run` — run controls of one tab: start, stop, live run events, pauses, human-started tool calls.
- `compare` — the compare dialog of two recorded runs: diff, scores, rubrics, verdict.
- `trace_view` — the trace view of a recorded run: its model and tool calls with timing.
- `catalog` — what the editor's pickers offer: models, built-in tools, MCP tools.
- `welcome` — first-start detection: API keys in the environment, local model servers.
- `models_page`, `mcp_page`, `skills_page`, `search_page`, `plugins_page` — the Settings
  pages (Models, MCP, Skills, Search, Plugins).
"""
