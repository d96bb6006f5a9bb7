"""The `city_facts` tool: facts about a city from Atlas's embedded table, as JSON.

Extension ID `plugin:atlas:tool:city-facts` (the file name); the model calls it `city_facts`.
Shows `context.settings` (`maxFacts`, `favoriteCities`) and `context.variables` (a prompt
variable named `city` is used when the call names no city).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from _atlas_shared import city_names, find_city, setting

if TYPE_CHECKING:  # the contract, for editors and type checkers only
    from llmspace.plugin_api import ToolContext

FIELDS = ("country", "population", "coordinates", "facts")


class CityFactsTool:
    name = "city_facts"
    description = (
        "Look up a city in the Atlas table and return its country, approximate population, "
        "coordinates and a few facts. Without `city`, uses the thread's `city` prompt variable, "
        "then the first favourite city from the plugin settings."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "city": {"type": "string", "minLength": 1, "maxLength": 100,
                     "description": "City name, for example Lisbon or São Paulo."},
            "fields": {"type": "array", "items": {"type": "string", "enum": list(FIELDS)}, "uniqueItems": True,
                       "description": "Which fields to return (default: all)."},
        },
        "additionalProperties": False,
    }
    strict = False  # `city` and `fields` are optional

    def execute(self, context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
        city, source = args.get("city"), "argument"
        if not city:
            city, source = context.variables.get("city"), "prompt variable"
        if not city:
            favorites = setting(context.settings, "favoriteCities", [])
            city, source = (favorites[0] if favorites else None), "settings"
        if not isinstance(city, str) or not city.strip():
            raise ValueError("Name a city (argument `city`), set the `city` prompt variable, "
                             "or add a favourite city in the Atlas settings.")
        found = find_city(city)
        if found is None:
            raise ValueError(f"Unknown city {city!r}. Known cities: {', '.join(city_names())}.")
        fields = args.get("fields") or FIELDS
        unknown = [f for f in fields if f not in FIELDS]
        if unknown:
            raise ValueError(f"Unknown fields {unknown}; choose from {', '.join(FIELDS)}.")
        max_facts = setting(context.settings, "maxFacts", 3)
        if not isinstance(max_facts, int) or isinstance(max_facts, bool) or max_facts < 0:
            max_facts = 3
        out: dict[str, Any] = {"city": found["name"], "source": source}
        if "country" in fields:
            out["country"] = found["country"]
        if "population" in fields:
            out["population"] = found["population"]
        if "coordinates" in fields:
            out["coordinates"] = {"lat": found["lat"], "lon": found["lon"]}
        if "facts" in fields:
            out["facts"] = found["facts"][:max_facts]
        return out
