"""The desktop app: Tk + ttkbootstrap views. The only package that imports tkinter or
ttkbootstrap; screen logic lives in `llmspace.presenters` and is tested without a display.
Only the Tk thread touches widgets: workers hand results back through `pump`.

Entry points (called by `llmspace.__main__`): `main.run_gui` and `main.self_test`.

Modules:
- `main` — start the app (`run_gui`) or check it (`self_test`).
- `main_window` — the main window; composed of `menus` (menu bar, shortcuts, palette
  commands), `tab_pages` (thread tabs and their editors), `tree_view` (workspace tree),
  `welcome` (welcome view, examples chooser) and `status_bar`.
- `panes` — panes that keep their share of the width as the window changes.
- `editor/` — the thread editor of one tab: `view` (header, settings column, prompt),
  `run_controls` (Run/Stop, pauses, banners), `messages` (virtualised message list, `drag`
  to reorder), `cards` (message cards, `card_images` thumbnails), `text_assist` (variable
  highlighting, `{{` completion, value tooltips), `panels` (model picker, parameters, tools
  dialog), `variables_dialog`, `history` (run history panel), `inspect` (one recorded run),
  `compare` (compare and evaluate two runs, rubric editor).
- `settings_dialog` — Settings: the `models_page`, `mcp_page` and `skills_page` list pages
  (built on `list_page`), the `search_page` form, `plugins_page`, General, and raw JSON
  editors for models.json and mcp.json (the fields those pages do not show).
- `palette` — the command palette.
- `pump` — the one thread boundary: a queue drained on the Tk thread with `after()`.
- `dialogs` — modal questions behind a facade that tests replace.
- `theme` — light/dark/system themes and zoom.
- `tkvars` — Tk variables that are safe to garbage-collect on any thread.
"""
