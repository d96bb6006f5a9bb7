"""Code shared by Atlas's extensions and its MCP server (a helper: not an extension).

The plugin root is on `sys.path` in the plugin host, so `tools/`, `commands/` and
`thread-storages/` files import it as `_atlas_shared`; `mcp/atlas_server.py` adds the
root itself. The file name starts with `_` and is unique across the plugin, as helper
names should be. Only the standard library is used here.

- `CITIES`, `find_city(name)`, `distance_km(a, b)`: a tiny embedded city table
  (approximate figures, for demonstration).
- `encode_png(width, height, rgb)`: an RGB image as PNG bytes (zlib + struct, no Pillow).
- `plain(value)`: a read-only settings/thread snapshot as plain, mutable dicts and lists.
- `setting(settings, "map.size", 256)`: one (nested) setting with a fallback.
- `data_folder()`: `$LLM_SPACE_HOME/data/plugins/atlas` (default `~/.llm-space/...`).
"""

from __future__ import annotations

import math
import os
import struct
import unicodedata
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

PLUGIN_NAME = "atlas"

CITIES: dict[str, dict[str, Any]] = {
    "lisbon": {"name": "Lisbon", "country": "Portugal", "population": 545_000, "lat": 38.7223, "lon": -9.1393,
               "facts": ["Built on seven hills above the Tagus estuary.",
                         "Its 25 de Abril Bridge is often compared to the Golden Gate.",
                         "Rebuilt on a grid plan after the 1755 earthquake."]},
    "tokyo": {"name": "Tokyo", "country": "Japan", "population": 14_000_000, "lat": 35.6762, "lon": 139.6503,
              "facts": ["Called Edo until 1868.",
                        "Its metropolis includes islands more than 1,000 km to the south.",
                        "Shinjuku Station is among the busiest stations in the world."]},
    "nairobi": {"name": "Nairobi", "country": "Kenya", "population": 4_400_000, "lat": -1.2921, "lon": 36.8219,
                "facts": ["Has a national park inside the city limits.",
                          "Grew from a railway depot founded in 1899."]},
    "sao paulo": {"name": "São Paulo", "country": "Brazil", "population": 11_400_000, "lat": -23.5505, "lon": -46.6333,
                  "facts": ["The most populous city of the Southern Hemisphere.",
                            "Founded by Jesuit missionaries in 1554."]},
    "sydney": {"name": "Sydney", "country": "Australia", "population": 5_300_000, "lat": -33.8688, "lon": 151.2093,
               "facts": ["Its harbour is one of the largest natural harbours in the world.",
                         "The Opera House opened in 1973."]},
    "reykjavik": {"name": "Reykjavík", "country": "Iceland", "population": 140_000, "lat": 64.1466, "lon": -21.9426,
                  "facts": ["The northernmost capital of a sovereign state.",
                            "Largely heated by geothermal water."]},
    "new york": {"name": "New York", "country": "United States", "population": 8_300_000, "lat": 40.7128,
                 "lon": -74.0060, "facts": ["Was briefly the capital of the United States.",
                                            "Its subway runs around the clock."]},
    "cairo": {"name": "Cairo", "country": "Egypt", "population": 10_000_000, "lat": 30.0444, "lon": 31.2357,
              "facts": ["Lies just north of the Nile delta's apex.",
                        "The pyramids of Giza stand at its western edge."]},
}
EARTH_RADIUS_KM = 6371.0088


def _key(name: str) -> str:
    folded = unicodedata.normalize("NFKD", name.strip().casefold())
    return " ".join("".join(c for c in folded if not unicodedata.combining(c)).replace("-", " ").split())


def find_city(name: str) -> dict[str, Any] | None:
    """The table entry for `name` (case, accents and extra spaces ignored), or None."""
    return CITIES.get(_key(name))


def city_names() -> list[str]:
    return sorted(c["name"] for c in CITIES.values())


def distance_km(a: Mapping[str, Any], b: Mapping[str, Any]) -> float:
    """The great-circle distance between two table entries, in kilometres (haversine)."""
    lat1, lon1, lat2, lon2 = (math.radians(float(x)) for x in (a["lat"], a["lon"], b["lat"], b["lon"]))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(h)))


def encode_png(width: int, height: int, rgb: bytes | bytearray) -> bytes:
    """PNG bytes of an 8-bit RGB image whose rows (`width * 3` bytes each) are in `rgb`."""
    if width <= 0 or height <= 0 or len(rgb) != width * height * 3:
        raise ValueError("encode_png needs width * height * 3 bytes of RGB")

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    stride = width * 3
    raw = b"".join(b"\x00" + bytes(rgb[y * stride:(y + 1) * stride]) for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def plain(value: Any) -> Any:
    """`value` with every mapping turned into a dict and every list-like into a list (the
    host hands plugins read-only snapshots; this gives a copy that can be changed)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray)):
        return [plain(v) for v in value]
    return value


def setting(settings: Mapping[str, Any] | None, path: str, default: Any) -> Any:
    """The setting at the dotted `path`, or `default` when it is missing or None."""
    node: Any = settings if settings is not None else {}
    for part in path.split("."):
        if not isinstance(node, Mapping) or node.get(part) is None:
            return default
        node = node[part]
    return node


def data_folder() -> Path:
    """Where Atlas keeps runtime data: `$LLM_SPACE_HOME/data/plugins/atlas` (never the plugin folder)."""
    home = os.environ.get("LLM_SPACE_HOME", "").strip()
    base = Path(home).expanduser() if home else Path.home() / ".llm-space"
    return base / "data" / "plugins" / PLUGIN_NAME
