"""``Record``: :class:`typing.NamedTuple` for type checkers, a plain namedtuple at run time.

The CLI's records (Entry, Manifest, ArMember...) are typed, immutable tuples.
``typing`` itself costs ~8 ms to import, a tenth of a whole small build or
install, so at run time classes are made with :func:`collections.namedtuple`
the same way ``typing.NamedTuple`` makes them: fields from the annotations,
defaults from the class body, methods and properties kept.
"""

from __future__ import annotations

import collections

__all__ = ["Record"]

TYPE_CHECKING = False  # mypy treats any TYPE_CHECKING as true; importing typing would cost

if TYPE_CHECKING:
    from typing import NamedTuple as Record
else:
    _RESERVED = {"__module__", "__qualname__", "__annotations__", "__dict__", "__weakref__",
                 "__slots__", "__orig_bases__"}

    class _RecordMeta(type):
        def __new__(mcs, name, bases, namespace):
            if bases == ():
                return super().__new__(mcs, name, bases, namespace)  # Record itself
            fields = list(namespace.get("__annotations__", {}))
            defaults = [namespace[f] for f in fields if f in namespace]
            if any(f not in namespace for f in fields[len(fields) - len(defaults):]):
                raise TypeError(f"{name}: fields without a default follow fields with one")
            cls = collections.namedtuple(name, fields, defaults=defaults,
                                         module=namespace.get("__module__"))
            for key, value in namespace.items():
                if key not in _RESERVED and key not in fields:
                    setattr(cls, key, value)
            cls.__annotations__ = namespace.get("__annotations__", {})
            cls.__qualname__ = namespace.get("__qualname__", name)
            return cls

    class Record(metaclass=_RecordMeta):
        """Subclass me like typing.NamedTuple."""
