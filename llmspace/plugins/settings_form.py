"""`config.schema.json` → a settings form model (docs/plugins.md, "Settings").

    form = build_form(schema)            # PluginError when the schema is invalid
    values = form.merge(saved)           # defaults under saved values
    form.problems(values)                # jsonschema validation, as "path: message" lines
    form.convert("net.timeout", "30")    # CLI text → a value of the field's type
    form.display(values)                 # values with secrets masked

Supported (what the GUI and the CLI render): nested objects; `string`, `number`,
`integer`, `boolean`; `enum`; titled enums (`oneOf`/`anyOf` of `const`/`title`, or
`enumNames`); arrays of primitives (a multi-select when their `items` have fixed values);
`required`, `default`, `title`, `description`, `format` (email, uri, date, date-time are
shown as hints), `minimum`/`maximum`. A field with `"format": "password"` or `"writeOnly": true` is a secret:
`display` masks it and `secret_values` lists its values for log sanitising. Anything else
makes the schema invalid (the form is disabled; saved settings are never touched).
Titles and descriptions lose control characters (`plain_text`: they are printed and shown);
a property name or enum value with one makes the schema invalid (they are keys and values
the plugin reads, so they are refused rather than changed).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import jsonschema
from jsonschema.exceptions import SchemaError

from ..core.names import plain_text, shown_name
from .errors import PluginError

PRIMITIVES = ("string", "number", "integer", "boolean")
MASK = "********"
_NO_DEFAULT = object()
_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


@dataclass(frozen=True)
class FormField:
    """One field. `type` is a primitive, `object` (with `children`) or `array` (of `item_type`)."""

    path: tuple[str, ...]
    type: str
    title: str = ""
    description: str = ""
    required: bool = False
    default: Any = _NO_DEFAULT
    enum: tuple[Any, ...] | None = None
    item_type: str | None = None
    secret: bool = False
    children: tuple[FormField, ...] = ()
    choices: tuple[tuple[Any, str], ...] | None = None  # (value, title) of an enum, titled or not; of an array's items
    format: str = ""
    minimum: float | None = None
    maximum: float | None = None

    @property
    def key(self) -> str:
        return ".".join(self.path)

    @property
    def has_default(self) -> bool:
        return self.default is not _NO_DEFAULT

    @property
    def label(self) -> str:
        return self.title or self.path[-1]

    @property
    def hint(self) -> str:
        """What the value must look like beyond its type ("an e-mail address", "1 to 5"), or ""."""
        parts = [FORMAT_HINTS.get(self.format, "")]
        if self.minimum is not None and self.maximum is not None:
            parts.append(f"{self.minimum:g} to {self.maximum:g}")
        elif self.minimum is not None:
            parts.append(f"at least {self.minimum:g}")
        elif self.maximum is not None:
            parts.append(f"at most {self.maximum:g}")
        return ", ".join(p for p in parts if p)


FORMAT_HINTS = {"email": "an e-mail address", "uri": "a URI (https://…)", "date": "a date (YYYY-MM-DD)",
                "date-time": "a date and time (YYYY-MM-DDTHH:MM)"}


def _choices(node: Any) -> tuple[tuple[Any, str], ...] | None:
    """(value, title) of an enum (`enumNames` titles it) or of a `oneOf`/`anyOf` of `const`s, else None."""
    if not isinstance(node, dict):
        return None
    enum = node.get("enum")
    if isinstance(enum, list) and enum:
        names = node.get("enumNames")
        titles = [str(t) for t in names] if isinstance(names, list) and len(names) == len(enum) else [str(v) for v in enum]
        return tuple((v, _shown(t)) for v, t in zip(enum, titles, strict=True))
    options = node.get("oneOf", node.get("anyOf"))
    if isinstance(options, list) and options and all(isinstance(o, dict) and "const" in o for o in options):
        return tuple((o["const"], _shown(o.get("title", o["const"]))) for o in options)
    return None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _type_of(node: dict[str, Any], where: str) -> str:
    kind = node.get("type")
    if kind is None and "properties" in node:
        return "object"
    if kind is None and isinstance(node.get("enum"), list) and node["enum"]:
        kinds = {_json_type(v) for v in node["enum"]}
        if len(kinds) == 1 and next(iter(kinds)) in PRIMITIVES:
            return next(iter(kinds))
    if kind is None and (titled := _choices(node)):  # a titled enum without a type: its consts' type
        kinds = {_json_type(v) for v, _t in titled}
        if len(kinds) == 1 and next(iter(kinds)) in PRIMITIVES:
            return next(iter(kinds))
    if kind in (*PRIMITIVES, "object", "array"):
        return str(kind)
    raise PluginError(f"config.schema.json: field {where or '(root)'} has an unsupported type {kind!r}; "
                      "use object, string, number, integer, boolean or an array of those primitives.")


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return type(value).__name__


def _field(node: Any, path: tuple[str, ...], required: bool) -> FormField:
    where = ".".join(path)
    if not isinstance(node, dict):
        raise PluginError(f"config.schema.json: field {where} must be a JSON object.")
    kind = _type_of(node, where)
    children: tuple[FormField, ...] = ()
    item_type = None
    if kind == "object":
        children = _children(node, path)
    elif kind == "array":
        items = node.get("items")
        item_type = _type_of(items, where + "[]") if isinstance(items, dict) else None
        if item_type not in PRIMITIVES:
            raise PluginError(f"config.schema.json: array {where} must have \"items\" of type string, number, integer or boolean.")
    enum = node.get("enum")
    for value in (path[-1], *(enum if isinstance(enum, list) else ())):
        if isinstance(value, str) and plain_text(value) != value:
            raise PluginError(f"config.schema.json: field {shown_name(where)} has a control character in "
                              f"{'its name' if value == path[-1] else 'an enum value'} {shown_name(value)!r}; "
                              "remove it.")
    return FormField(
        path=path, type=kind, title=_shown(node.get("title")), description=_shown(node.get("description")),
        required=required, default=copy.deepcopy(node["default"]) if "default" in node else _NO_DEFAULT,
        enum=tuple(enum) if isinstance(enum, list) else None, item_type=item_type,
        secret=node.get("format") == "password" or node.get("writeOnly") is True, children=children,
        choices=_choices(node.get("items") if kind == "array" else node), format=str(node.get("format") or ""),
        minimum=_number(node.get("minimum")), maximum=_number(node.get("maximum")),
    )


def _shown(text: Any) -> str:
    """A schema title or description as it is shown: text without control characters."""
    return plain_text(str(text or ""))


def _children(node: dict[str, Any], path: tuple[str, ...]) -> tuple[FormField, ...]:
    props = node.get("properties", {})
    required = node.get("required", [])
    if not isinstance(props, dict) or not isinstance(required, list):
        raise PluginError(f"config.schema.json: \"properties\" of {'.'.join(path) or '(root)'} must be an object.")
    return tuple(_field(sub, (*path, key), key in required) for key, sub in props.items())


@dataclass(frozen=True)
class SettingsForm:
    schema: dict[str, Any]
    fields: tuple[FormField, ...]
    title: str = ""
    description: str = ""

    def walk(self) -> Iterator[FormField]:
        """Every field, depth first (objects before their children)."""
        stack = list(reversed(self.fields))
        while stack:
            f = stack.pop()
            yield f
            stack.extend(reversed(f.children))

    def field(self, key: str) -> FormField | None:
        return next((f for f in self.walk() if f.key == key), None)

    def defaults(self) -> dict[str, Any]:
        return _defaults(self.fields)

    def merge(self, saved: dict[str, Any]) -> dict[str, Any]:
        """The defaults with `saved` laid over them (objects merged key by key)."""
        return _deep_merge(self.defaults(), saved)

    def problems(self, values: dict[str, Any]) -> list[str]:
        validator = jsonschema.validators.validator_for(self.schema)(self.schema)
        out = []
        for err in sorted(validator.iter_errors(values), key=lambda e: list(map(str, e.absolute_path))):
            where = ".".join(str(p) for p in err.absolute_path) or "(settings)"
            secret = (f := self.field(where)) is not None and f.secret
            out.append(f"{where}: {'invalid secret value' if secret else err.message}")
        return out

    def convert(self, key: str, text: str) -> Any:
        """The value of `text` for field `key`, by the field's type; PluginError if it cannot be."""
        f = self.field(key)
        if f is None:
            known = ", ".join(x.key for x in self.walk() if x.type != "object")
            raise PluginError(f"No setting {key!r}.", hint=f"Settings of this plugin: {known or '(none)'}.")
        if f.type == "array":
            assert f.item_type is not None
            if text.strip().startswith("["):
                parsed = _json(text, key)
                if not isinstance(parsed, list):
                    raise PluginError(f"{key} expects a list.")
                return parsed
            return [_primitive(f.item_type, part.strip(), key) for part in text.split(",") if part.strip()]
        if f.type == "object":
            parsed = _json(text, key)
            if not isinstance(parsed, dict):
                raise PluginError(f"{key} expects a JSON object.")
            return parsed
        return _primitive(f.type, text, key)

    def secret_values(self, values: dict[str, Any]) -> list[str]:
        out = []
        for f in self.walk():
            if f.secret:
                v = get_path(values, f.path)
                if isinstance(v, str) and v:
                    out.append(v)
                elif isinstance(v, list):
                    out += [str(x) for x in v]
        return out

    def display(self, values: dict[str, Any]) -> dict[str, Any]:
        """`values` with every secret field that has a value replaced by a mask."""
        shown = copy.deepcopy(values)
        for f in self.walk():
            if f.secret and get_path(shown, f.path) not in (None, "", _NO_DEFAULT):
                set_path(shown, f.path, MASK)
        return shown


def _json(text: str, key: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PluginError(f"{key}: not valid JSON ({exc.msg}).") from None


def _primitive(kind: str, text: str, key: str) -> Any:
    if kind == "string":
        return text
    if kind == "boolean":
        low = text.strip().lower()
        if low in _TRUE or low in _FALSE:
            return low in _TRUE
        raise PluginError(f"{key} expects true or false, not {text!r}.")
    try:
        if kind == "integer":
            return int(text.strip())
        number = float(text.strip())
    except ValueError:
        raise PluginError(f"{key} expects {'an integer' if kind == 'integer' else 'a number'}, not {text!r}.") from None
    return int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number


def _defaults(fields: tuple[FormField, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields:
        if f.type == "object":
            inner = _defaults(f.children)
            base = copy.deepcopy(f.default) if isinstance(f.default, dict) else {}
            if inner or base:
                out[f.path[-1]] = _deep_merge(base, inner)
        elif f.has_default:
            out[f.path[-1]] = copy.deepcopy(f.default)
    return out


def _deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = _deep_merge(out[k], v) if isinstance(out.get(k), dict) and isinstance(v, dict) else copy.deepcopy(v)
    return out


def get_path(values: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(values, dict) or part not in values:
            return None
        values = values[part]
    return values


def set_path(values: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node = values
    for part in path[:-1]:
        nxt = node.get(part)
        if not isinstance(nxt, dict):
            nxt = node[part] = {}
        node = nxt
    node[path[-1]] = value


def build_form(schema: Any) -> SettingsForm:
    """The form of a parsed `config.schema.json`, or PluginError naming what is wrong."""
    if not isinstance(schema, dict):
        raise PluginError("config.schema.json must hold a JSON object.")
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.path) or "(root)"
        raise PluginError(f"config.schema.json is not a valid JSON Schema at {where}: {exc.message}") from None
    if _type_of(schema, "") != "object":
        raise PluginError("config.schema.json must describe an object (\"type\": \"object\").")
    fields = _children(schema, ())
    form = SettingsForm(schema, fields, _shown(schema.get("title")), _shown(schema.get("description")))
    problems = form.problems(form.defaults())
    bad_defaults = [p for p in problems if "is a required property" not in p]
    if bad_defaults:
        raise PluginError(f"config.schema.json: a default does not match its field: {bad_defaults[0]}")
    return form
