"""The `render_map` tool: draws cities of the Atlas table on a small map and returns the
picture as rich content (`context.create_result` with a text part and a PNG image part).

Extension ID `plugin:atlas:tool:render-map`. The PNG is drawn pixel by pixel and encoded
with zlib (no Pillow). Settings: `map.size` (width in pixels), `map.zoom`, `map.showGrid`.
"""

from __future__ import annotations

import base64
from itertools import pairwise
from typing import TYPE_CHECKING, Any, ClassVar

from _atlas_shared import city_names, encode_png, find_city, setting

if TYPE_CHECKING:  # the contract, for editors and type checkers only
    from llmspace.plugin_api import PluginResult, ToolContext

OCEAN = (24, 62, 110)
GRID = (60, 104, 150)
ROUTE = (250, 210, 90)
MARKER = (235, 64, 52)


class _Canvas:
    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.pixels = bytearray(bytes(OCEAN) * (width * height))

    def dot(self, x: int, y: int, color: tuple[int, int, int]) -> None:
        if 0 <= x < self.width and 0 <= y < self.height:
            i = (y * self.width + x) * 3
            self.pixels[i:i + 3] = bytes(color)

    def line(self, x0: float, y0: float, x1: float, y1: float, color: tuple[int, int, int]) -> None:
        steps = int(max(abs(x1 - x0), abs(y1 - y0))) + 1
        for s in range(steps + 1):
            t = s / steps
            self.dot(round(x0 + (x1 - x0) * t), round(y0 + (y1 - y0) * t), color)

    def disc(self, cx: float, cy: float, r: int, color: tuple[int, int, int]) -> None:
        for dy in range(-r, r + 1):
            for dx in range(-r, r + 1):
                if dx * dx + dy * dy <= r * r:
                    self.dot(round(cx) + dx, round(cy) + dy, color)


class RenderMapTool:
    name = "render_map"
    description = ("Draw the given cities of the Atlas table on a small world map (a PNG image), "
                   "joined in order like a route.")
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "cities": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 100},
                       "minItems": 1, "maxItems": 8, "description": "City names, in route order."},
        },
        "required": ["cities"],
        "additionalProperties": False,
    }
    strict = True

    def execute(self, context: ToolContext, args: dict[str, Any]) -> PluginResult:
        names = args.get("cities")
        if not isinstance(names, list) or not names or len(names) > 8:
            raise ValueError("cities must be a list of 1 to 8 city names.")
        cities = []
        for name in names:
            found = find_city(str(name))
            if found is None:
                raise ValueError(f"Unknown city {name!r}. Known cities: {', '.join(city_names())}.")
            cities.append(found)
        width = int(setting(context.settings, "map.size", 256))
        width = min(max(width, 64), 512)
        zoom = float(setting(context.settings, "map.zoom", 1.0))
        zoom = min(max(zoom, 1.0), 8.0)
        png = self._draw(cities, width, zoom, bool(setting(context.settings, "map.showGrid", True)))
        route = " → ".join(c["name"] for c in cities)
        return context.create_result([
            {"type": "text", "text": f"Map of {route} ({width}×{width // 2} px, zoom {zoom:g})."},
            {"type": "image", "mimeType": "image/png", "data": base64.b64encode(png).decode("ascii")},
        ])

    @staticmethod
    def _draw(cities: list[dict[str, Any]], width: int, zoom: float, grid: bool) -> bytes:
        height = width // 2
        canvas = _Canvas(width, height)
        span_lon, span_lat = 360 / zoom, 180 / zoom
        center_lon = sum(c["lon"] for c in cities) / len(cities) if zoom > 1 else 0.0
        center_lat = sum(c["lat"] for c in cities) / len(cities) if zoom > 1 else 0.0

        def xy(lat: float, lon: float) -> tuple[float, float]:
            return ((lon - center_lon) / span_lon + 0.5) * (width - 1), (0.5 - (lat - center_lat) / span_lat) * (height - 1)

        if grid:
            for lon in range(-180, 181, 30):
                x, _ = xy(0, lon)
                canvas.line(x, 0, x, height - 1, GRID)
            for lat in range(-90, 91, 30):
                _, y = xy(lat, 0)
                canvas.line(0, y, width - 1, y, GRID)
        points = [xy(c["lat"], c["lon"]) for c in cities]
        for (x0, y0), (x1, y1) in pairwise(points):
            canvas.line(x0, y0, x1, y1, ROUTE)
        for x, y in points:
            canvas.disc(x, y, max(2, width // 96), MARKER)
        return encode_png(width, height, canvas.pixels)


default = RenderMapTool  # the file defines two classes, so name the extension's class explicitly
