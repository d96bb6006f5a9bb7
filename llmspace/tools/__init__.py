"""Tools: the router that runs any tool call (`router.py`), the built-ins (`builtins/`),
argument checks (`validation.py`), the risky-bash denylist (`safety.py`) and custom
function tool validation (`functions.py`). Nothing runs on import.
"""
