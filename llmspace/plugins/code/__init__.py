"""Plugin code extensions in the app — tools, commands and thread storages whose code runs
in a host process (llmspace/plugins/hosts/).

- `plugin_code.py`    `PluginCode` (`app.plugin_code`): follows the plugin records, loads
                      what the hosts report, routes calls, answers questions about them
- `registration.py`   what a host reported → registry entries; failed extensions and their
                      logs; readable storages sharing a `deepLinkId` left out
- `metadata_cache.py` the `initialize` answers cached under `cache/plugins/`
- `calls.py`          `PluginToolRunner`, `PluginCommand`, `PluginStorage`: registry entries
                      that turn into host calls
- `palette_args.py`   command-palette lines → a plugin command and its arguments
- `storages.py`       thread storages as the app uses them: import, save, open deep links
- `deeplink.py`       `llm-space://threads/<deepLinkId>/<resource ID>` parsed and formatted
"""
