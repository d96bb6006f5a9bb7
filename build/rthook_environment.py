"""PyInstaller runtime hook (build/llmspace.spec), run before the app's first line.

On Linux the bootloader prepends the bundle's folder (`_MEIxxxx`) to LD_LIBRARY_PATH so the
frozen interpreter finds its libraries, keeping the user's value in LD_LIBRARY_PATH_ORIG (AIX:
LIBPATH). The dynamic loader read it when this process started, so the app no longer needs it,
but every program the app starts would inherit it: Node or Bun for JavaScript plugins, MCP
servers, shell tools. They would then load the bundle's libstdc++, libssl or libpython instead
of their own and can fail ("GLIBCXX_3.4.32 not found"). Restore the user's value here, once,
for every child process. The plugin host (this executable again) sets it up for itself.
"""

import os

for _name in ("LD_LIBRARY_PATH", "LIBPATH"):
    _original = os.environ.pop(_name + "_ORIG", None)
    if _original is not None:
        os.environ[_name] = _original
    else:
        os.environ.pop(_name, None)
