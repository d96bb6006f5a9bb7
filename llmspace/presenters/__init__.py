"""Screen logic without Tk: state and intents of the tree, tabs, editor (+ messages, history), the
compare dialog (`compare`), run controls, welcome, catalog pickers, models settings page and the persisted UI state.
Used by `llmspace.ui`; tested without a display. Never imports tkinter.
"""
