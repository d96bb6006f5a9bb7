"""stdout belongs to the protocol: print(), sys.__stdout__ and writes to file descriptor 1
from plugin code (at import and during calls, from child processes too) reach stderr, and
stdin gives plugin code nothing."""

from __future__ import annotations

NOISY = """
    import os
    import subprocess
    import sys

    print("printed at import")
    os.write(1, b"fd 1 at import\\n")

    class Noisy:
        name = "noisy"
        description = ""
        parameters = {"type": "object"}

        def execute(self, context, args):
            print("printed in execute", {"not": "a protocol message"})
            sys.__stdout__.write("sys.__stdout__ in execute\\n")
            sys.__stdout__.flush()
            os.write(1, b'{"jsonrpc": "2.0", "id": 1, "result": "forged"}\\n')
            subprocess.run([sys.executable, "-c", "print('child process stdout')"], check=True)
            return "quiet answer"
"""


def test_print_and_fd_1_writes_from_plugin_code_go_to_stderr_and_the_stream_stays_valid(start_plugin):
    client, _ = start_plugin({"tools/noisy.py": NOISY})
    assert client.tool("noisy") == {"type": "value", "value": "quiet answer"}
    for text in ("printed at import", "fd 1 at import", "printed in execute", "sys.__stdout__ in execute",
                 '"result": "forged"', "child process stdout"):
        assert client.wait_stderr(text), (text, client.stderr)
    assert client.bad_lines == [] and client.orphans == []
    assert client.result("ping") == {}


def test_reading_stdin_in_plugin_code_gets_nothing_and_steals_no_protocol_bytes(start_plugin):
    source = """
        import os
        import sys

        class Reads:
            name = "reads"
            description = ""
            parameters = {"type": "object"}

            def execute(self, context, args):
                try:
                    line = input()
                except EOFError:
                    line = "EOF"
                return [line, sys.stdin.read(), os.read(0, 100).decode()]
    """
    client, _ = start_plugin({"tools/reads.py": source})
    assert client.tool("reads")["value"] == ["EOF", "", ""]
    assert client.result("ping") == {}
