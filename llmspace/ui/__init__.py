"""The desktop app (Tk + ttkbootstrap): the only package that imports tkinter.

Entry points: `ui.main.run_gui` and `ui.main.self_test` (called by `llmspace.__main__`).
Layout: `main_window` (+ `menus`, `tab_pages`), `tree_view`, `welcome`, `settings_dialog`,
`models_page`, `palette`, `editor/` (thread editor: `view`, `run_controls`, `messages`,
`cards`, `panels`, `history`, `inspect`, `compare`), `pump` (the one thread boundary), `dialogs`, `theme`,
`tkvars`. Screen logic lives in `llmspace.presenters` and is tested without a display.
"""
