"""``Record``: :class:`typing.NamedTuple` for type checkers, a plain namedtuple at run time.

The CLI's records (Entry, Manifest, ArMember...) are typed, immutable tuples.
``typing`` itself costs ~8 ms to import, a tenth of a whole small build or
install, so at run time classes are made the way :func:`collections.namedtuple`
makes them (a tuple subclass with the same C field accessors, ``_fields``,
``_replace``, ``_asdict``, ``_make`` and repr), from the annotations as
``typing.NamedTuple`` reads them: defaults from the class body, methods and
properties kept.  Only ``__new__`` differs: a closure instead of source
compiled with ``eval``, which cost a tenth of a millisecond per class on every
command's start-up.
"""

from __future__ import annotations

__all__ = ["Record"]

TYPE_CHECKING = False  # mypy treats any TYPE_CHECKING as true; importing typing would cost

if TYPE_CHECKING:
    from typing import NamedTuple as Record
else:
    from _collections import _tuplegetter  # namedtuple's C field accessor

    _RESERVED = {"__module__", "__qualname__", "__annotations__", "__dict__", "__weakref__",
                 "__slots__", "__orig_bases__", "__doc__"}
    _tuple_new = tuple.__new__

    class _RecordMeta(type):
        def __new__(mcs, name, bases, namespace):
            if bases == ():
                return super().__new__(mcs, name, bases, namespace)  # Record itself
            fields = tuple(namespace.get("__annotations__", {}))
            defaults = {f: namespace[f] for f in fields if f in namespace}
            if any(f not in namespace for f in fields[len(fields) - len(defaults):]):
                raise TypeError(f"{name}: fields without a default follow fields with one")
            body = {key: value for key, value in namespace.items()
                    if key not in _RESERVED and key not in fields}
            body.update(_SHARED)
            body.update({f: _tuplegetter(i, f"Alias for field number {i}")
                         for i, f in enumerate(fields)})
            body.update(
                __slots__=(), _fields=fields, _field_defaults=defaults, __match_args__=fields,
                __new__=_new_for(name, fields, defaults),
                __module__=namespace.get("__module__"),
                __qualname__=namespace.get("__qualname__", name),
                __doc__=namespace.get("__doc__") or f"{name}({', '.join(fields)})",
            )
            cls = type(name, (tuple,), body)
            cls.__annotations__ = namespace.get("__annotations__", {})
            return cls

    def _new_for(name, fields, defaults):
        """A ``__new__`` for the class: a closure, where namedtuple compiles source with
        ``eval`` (a tenth of a millisecond per class, on every command's start-up)."""
        count = len(fields)

        def __new__(cls, *args, **kwargs):
            if kwargs or len(args) != count:
                args = _bind(name, fields, defaults, args, kwargs)
            return _tuple_new(cls, args)

        __new__.__qualname__ = f"{name}.__new__"
        return __new__

    def _bind(name, fields, defaults, args, kwargs):
        if len(args) > len(fields):
            raise TypeError(f"{name}() takes {len(fields)} positional arguments but "
                            f"{len(args)} were given")
        values = list(args)
        for field in fields[len(args):]:
            if field in kwargs:
                values.append(kwargs.pop(field))
            elif field in defaults:
                values.append(defaults[field])
            else:
                raise TypeError(f"{name}() missing required argument: {field!r}")
        if kwargs:  # left over: given twice, or no such field
            key = next(iter(kwargs))
            raise TypeError(f"{name}() got multiple values for argument {key!r}" if key in fields
                            else f"{name}() got an unexpected keyword argument {key!r}")
        return tuple(values)

    @classmethod
    def _make(cls, iterable):
        result = _tuple_new(cls, iterable)
        if len(result) != len(cls._fields):
            raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(result)}")
        return result

    def _replace(self, /, **changes):
        result = self._make(map(changes.pop, self._fields, self))
        if changes:
            raise ValueError(f"Got unexpected field names: {list(changes)!r}")
        return result

    def _asdict(self):
        return dict(zip(self._fields, self))

    def __repr__(self):
        inner = ", ".join(f"{field}={value!r}" for field, value in zip(self._fields, self))
        return f"{type(self).__name__}({inner})"

    def __getnewargs__(self):
        return tuple(self)

    _SHARED = {"_make": _make, "_replace": _replace, "_asdict": _asdict, "__repr__": __repr__,
               "__getnewargs__": __getnewargs__}

    class Record(metaclass=_RecordMeta):
        """Subclass me like typing.NamedTuple."""
