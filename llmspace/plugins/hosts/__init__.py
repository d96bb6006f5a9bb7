"""The plugin code hosts, app side: the processes that run plugin code and how the app
talks to them (docs/plugin-protocol.md; the hosts themselves are llmspace/plugin_host/).

- `host.py`        `PluginHost`: one host process of one plugin and runtime — start on demand,
                   calls with timeouts and cancel, crash restarts with backoff, stop
- `spec.py`        `HostSpec`: what a host is started for (plugin, runtime, files, capabilities)
- `pool.py`        `HostPool`: every plugin's hosts, how each runtime is launched (the Python
                   host, the JavaScript host under the chosen runtime), idle stops, closing
- `connection.py`  `HostConnection`: the JSON-RPC pipe to one host process, its memory watch, its end
- `stderr.py`      what a host writes on stderr: capped lines to output.log, the tail for crash reports
- `callbacks.py`   what plugin code may ask of the app while a call runs (notify, files, …)
- `js_runtime.py`  which JavaScript runtime (Bun, Node) runs `.ts/.js/.mjs` files
- `proctree.py`    the host's processes on Linux: spawning, its cgroup or its tree, stop and kill, memory
- `tempdir.py`     a confined plugin's temp folder: its quota, emptied when its hosts end
- `output_log.py`  each plugin's `output.log` (what its hosts print, tracebacks of failed calls)
"""
