"""Byte-for-byte round trips of thread files: what every file-format model inherits.

- `Node`: the pydantic base of every model in `core/model.py` — unknown keys kept
  (`extra="allow"`), and the key order of the JSON a node came from remembered when it
  differs from the declared order.
- `recording_key_orders()`: around a validation, collects the nodes that remembered an order
  (empty for the usual files, so saving them costs nothing extra).
- `apply_key_order(node, dumped)`: re-imposes those orders on the node's dumped dict, visiting
  only the subtrees that hold one.

No I/O.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, PrivateAttr, model_validator

# Nodes whose source key order differs from the declared order register here while a
# thread is being validated (`recording_key_orders`), so saving can restore that order
# without a per-node cost for the usual files.
_ORDER_SINK: ContextVar[list[Any] | None] = ContextVar("llmspace_order_sink", default=None)


class Node(BaseModel):
    """Base of every file-format model: unknown keys kept, source key order remembered."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, ser_json_inf_nan="null")

    _key_order: tuple[str, ...] | None = PrivateAttr(default=None)
    # True when this node or one below it remembers a key order (lets saving skip the rest).
    _order_below: bool = PrivateAttr(default=False)
    _declared: ClassVar[tuple[str, ...]] = ()
    _canonical_seen: ClassVar[set[tuple[str, ...]]]

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls._declared = tuple(f.alias or name for name, f in cls.model_fields.items())
        cls._canonical_seen = set()
        # Private defaults are plain constants: set them with one dict copy per node instead of
        # pydantic's generic per-attribute initialiser (a third of the time to load a big thread).
        # (Only when no subclass defines model_post_init and every default is a constant.)
        attrs = cls.__private_attributes__
        if getattr(cls.model_post_init, "__name__", "") != "init_private_attributes" or any(
                a.default_factory is not None for a in attrs.values()):
            return
        defaults = {name: attr.get_default() for name, attr in attrs.items()}

        def _post_init(self: BaseModel, context: Any, /) -> None:
            if getattr(self, "__pydantic_private__", None) is None:
                object.__setattr__(self, "__pydantic_private__", defaults.copy())

        cls.model_post_init = _post_init  # type: ignore[method-assign]

    @model_validator(mode="wrap")
    @classmethod
    def _remember_order(cls, data: Any, handler: Any) -> Any:
        sink = _ORDER_SINK.get()
        before = len(sink) if sink is not None else 0
        obj = handler(data)
        if type(data) is dict and len(data) > 1:
            keys = tuple(data)
            if keys not in cls._canonical_seen:
                declared = cls._declared
                canon = [k for k in declared if k in data]
                canon.extend(k for k in keys if k not in declared)
                if tuple(canon) == keys:
                    if len(cls._canonical_seen) < 4096:
                        cls._canonical_seen.add(keys)
                else:
                    obj._key_order = keys
                    if sink is not None:
                        sink.append(obj)
        if sink is not None and len(sink) > before:
            obj._order_below = True
        return obj

    def extras(self) -> dict[str, Any]:
        """Unknown keys carried by this node (kept for round trips)."""
        return dict(self.__pydantic_extra__ or {})


def apply_key_order(node: Node, out: dict[str, Any]) -> dict[str, Any]:
    """Re-impose source key orders remembered on nodes onto their dumped dicts.

    Only subtrees flagged `_order_below` at validation time are visited."""
    for name in node.model_fields_set:
        child = getattr(node, name, None)
        sub = out.get(name)
        if isinstance(child, Node):
            if child._order_below and isinstance(sub, dict):
                out[name] = apply_key_order(child, sub)
        elif isinstance(child, list) and isinstance(sub, list):
            for i, item in enumerate(child):
                if isinstance(item, Node) and item._order_below and i < len(sub):
                    sub[i] = apply_key_order(item, sub[i])
        elif isinstance(child, dict) and isinstance(sub, dict):
            for k, item in child.items():
                if isinstance(item, Node) and item._order_below and k in sub:
                    sub[k] = apply_key_order(item, sub[k])
    order = node._key_order
    if order:
        ordered = {k: out[k] for k in order if k in out}
        ordered.update((k, v) for k, v in out.items() if k not in ordered)
        return ordered
    return out


@contextmanager
def recording_key_orders() -> Iterator[list[Node]]:
    """While open, nodes validated in this context that remember a key order are appended to
    the yielded list."""
    sink: list[Any] = []
    token = _ORDER_SINK.set(sink)
    try:
        yield sink
    finally:
        _ORDER_SINK.reset(token)
