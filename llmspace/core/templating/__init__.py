"""Prompt variables and rendering: what a thread's texts become before a model sees them.

- `variables`: the name rule, the default variables, a thread's effective variables, and
  adding, changing, removing and renaming them.
- `places`: the text places of a thread (system prompt, message texts, tool results) and
  their keys.
- `frozen_values`: the values a recorded run froze per place, and when an edit drops them.
- `references`: where each variable is used, with its status, and the completion list
  (editor hints).
- `builtin_formats`: the `current_date` text and the `available_skills` list.
- `resolution`: variables resolved to values (`RenderEnv`, file variables, `@include` and
  `exists()` file access; `resolve_variables` for plugin tools' `context.variables`).
- `render`: `render_thread`, the texts a run sends, and which texts are evaluated at all
  (trust: an `@include` in a model reply or a tool's output is not evaluated).
- `templates`: the Jinja2 template path (`{% %}`, `{{ @include(…) }}`, `exists()`);
  `sandbox`: the sandbox and the work limits every template render runs under;
  `jinja_values`: how unknown names and JSON values print in a template.
- `file_reads`: which local files running a thread would read (import warnings).
"""
