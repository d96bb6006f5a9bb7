"""Atlas's stdio MCP server: two tools over the embedded city table.

    city_population(city)          → {"city", "country", "population"}
    distance_km(from_city, to_city) → {"from", "to", "km"}

mcp.json starts it as `${settings.python} mcp/atlas_server.py` in the plugin folder, so the
`python` setting must name an interpreter that has the `mcp` package (2.x) installed. Run
it by hand with `python mcp/atlas_server.py` (it speaks MCP on stdin/stdout; logs go to stderr).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

# The shared table lives at the plugin root (appended, so installed packages such as `mcp`
# always win over anything in the plugin folder).
sys.path.append(str(Path(__file__).resolve().parents[1]))

import _atlas_shared as atlas

server = MCPServer("atlas-geo", log_level="WARNING")


def _city(name: str) -> dict[str, Any]:
    found = atlas.find_city(name)
    if found is None:
        raise ToolError(f"Unknown city {name!r}. Known cities: {', '.join(atlas.city_names())}.")
    return found


@server.tool()
def city_population(city: str) -> dict[str, Any]:
    """The approximate population of a city in the Atlas table (Lisbon, Tokyo, Nairobi, …)."""
    found = _city(city)
    return {"city": found["name"], "country": found["country"], "population": found["population"]}


@server.tool()
def distance_km(from_city: str, to_city: str) -> dict[str, Any]:
    """The great-circle distance in kilometres between two cities of the Atlas table."""
    a, b = _city(from_city), _city(to_city)
    return {"from": a["name"], "to": b["name"], "km": round(atlas.distance_km(a, b), 1)}


if __name__ == "__main__":
    server.run("stdio")
