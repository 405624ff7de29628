"""The intent record: what a writer is about to change, written before it changes it.

A change to what an app is (``current``, a registration) and to the hook links
that must follow it takes several steps: flip ``current``, make the system
hooks' links, flip the user's registration, make the user's links, remove the
version nobody uses any more.  A writer killed between two of them leaves links
that do not match ``current`` (a launcher entry into the old version, or into
nothing).  So before its first step a writer records its intent in the lock
file (:meth:`~.lock.DatabaseLock.record_intent`), and empties it when the last
step is done; the next writer to take the lock finds any intent left there and
finishes that change first (:mod:`.changes`).  Every step is idempotent, so a
change finished twice, or killed again while it is finished, comes out the same.

A record is one line of NUL-separated fields, written with one ``pwrite``:
``click-build-intent 1``, the kind of change, its fields, then ``end``.  A record
without its end was cut short before any step began, and means nothing.  The
lock file is the database owner's, so a record is read as carefully as
anything else there: every name is checked before it is used.
"""

from __future__ import annotations

from .._record import Record
from ..errors import ClickError
from .names import check_package, check_user, check_version
from .users import HIDDEN

__all__ = ["KINDS", "Intent", "decode", "encode"]

_MAGIC = b"click-build-intent 1"
_END = b"end\n"

#: Each kind of change and what it does; :mod:`.changes` finishes each one.
KINDS = {
    "install": "an install",
    "register": "a registration",
    "unregister": "an unregistration",
    "remove": "a removal",
    "sync-system": "a run of the system hooks",
    "sync-user": "a run of a user's hooks",
    "hook-install": "a hook install",
    "hook-remove": "a hook removal",
}


class Intent(Record):
    """One change, with what its steps need to be done again from any point.

    ``old``: for an install, the version ``current`` named before it; for an
    unregistration, ``@hidden`` when it hides a lower database's registration
    rather than removing the user's own link.  ``replaced``: the version the
    user had registered before.  ``""`` stands for none in every field.
    """

    kind: str
    package: str = ""
    version: str = ""
    old: str = ""
    replaced: str = ""
    user: str = ""
    hook: str = ""

    def describe(self) -> str:
        what = KINDS.get(self.kind, self.kind)
        subject = " ".join(x for x in (self.package, self.version) if x) or self.hook
        who = f" for {self.user}" if self.user else ""
        return f"{what} of {subject}{who}" if subject else f"{what}{who}"


def encode(intent: Intent) -> bytes:
    fields = [_MAGIC, *(value.encode("utf-8", "surrogateescape") for value in intent), _END]
    return b"\0".join(fields)


def decode(raw: bytes) -> Intent | None:
    """The intent in ``raw``; None for a record cut short (no step began).

    A complete record that is not one (a kind we do not know, a name that could
    not be an app's, version's or user's) is a :class:`ClickError`.
    """
    fields = raw.split(b"\0")
    if len(fields) != len(Intent._fields) + 2 or fields[-1] != _END:
        if raw.startswith(_MAGIC) or _MAGIC.startswith(raw[:len(_MAGIC)]):
            return None  # cut short while it was written
        raise ClickError("the lock file holds something that is not an intent record")
    if fields[0] != _MAGIC:
        raise ClickError("the lock file holds something that is not an intent record")
    try:
        values = [f.decode("utf-8") for f in fields[1:-1]]
    except UnicodeDecodeError:
        raise ClickError("the intent record is not UTF-8") from None
    intent = Intent(*values)
    if intent.kind not in KINDS:
        raise ClickError(f"the intent record names an unknown change {intent.kind!r}")
    if intent.package:
        check_package(intent.package)
    if intent.kind == "unregister":
        if intent.old not in ("", HIDDEN):
            raise ClickError(f"the intent record's unregistration says {intent.old!r}")
    elif intent.old:
        check_version(intent.old)
    for version in (intent.version, intent.replaced):
        if version:
            check_version(version)
    if intent.user:
        check_user(intent.user)
    if intent.hook and ("/" in intent.hook or intent.hook in (".", "..")
                        or not intent.hook.isprintable()):
        raise ClickError(f"the intent record names a hook {intent.hook!r} that no hook file has")
    return intent
