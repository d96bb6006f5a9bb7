"""The thread editor of one tab: `view` (header with `title_field`, settings column with
`model_row`, system prompt), `run_controls`, `messages` (message list, with `drag` to reorder)
and `cards` (with `card_header` and `card_images` thumbnails), `text_assist` (variable
highlighting, `completion` after `{{`, `var_hover` value tooltips in every text box), `flow`
(wrapping rows of buttons or pictures), `panels` (pickers, tools dialog),
`variables_dialog`, `history`, `inspect`, `trace_view` and `compare` (recorded runs). Screen logic in
`llmspace.presenters.editor` and its components."""
