"""The thread editor of one tab: `view` (header, settings column, system prompt),
`run_controls`, `messages` (message list) and `cards`, `panels` (pickers and dialogs),
`history`, `inspect` and `compare` (recorded runs). Screen logic in
`llmspace.presenters.editor` and its components."""
