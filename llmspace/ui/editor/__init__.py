"""The thread editor of one tab: `view` (header with `title_field`, settings column with
`model_row`, system prompt), `run_controls`, `messages` (message list) and `cards` (with
`card_header`), `panels` (pickers and dialogs), `history`, `inspect` and `compare` (recorded
runs). Screen logic in `llmspace.presenters.editor` and its components."""
