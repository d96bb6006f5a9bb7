"""The command groups of the command line (`llmspace/cli.py`). Each module exposes
`register(subparsers)`; the handlers it registers receive `(args, app)` and return an exit
code. Nothing runs on import.

Modules:
- `threads.py`    `threads list|new|examples|seed`
- `importing.py`  `import FILE…`
- `schema.py`     `schema thread`
- `run.py`        `run THREAD` (headless run, streamed output)
- `models.py`     `models`, `ping PROVIDER/MODEL`
- `tools.py`      `tools list`
- `mcp.py`        `mcp list|add|remove|test|tools|prompts|resources|call`
- `skills.py`     `skills list|enable|disable|show|folders|add-folder|remove-folder`
- `render.py`     `render THREAD`
- `history.py`    `history`, `compare`, `evaluate`, `rubric`, `fork`
- `matrix.py`     `matrix THREAD`
- `traces.py`     `traces projects|new|import|list|open|to-thread|remove`
- `parsers.py`    helpers shared by the `register` functions
"""
