"""The times in a package: ``SOURCE_DATE_EPOCH``, its bounds, and each file's time.

A build is reproducible, so no time comes from the clock: the package's one
timestamp (archive members, gzip headers, folders, links) is
``SOURCE_DATE_EPOCH`` or, unset, :data:`FALLBACK_EPOCH`.  A regular file gets a
time of its own, derived from its content (:func:`content_time`): the same
bytes give the same time, and an edited file a different one.  That matters on
the phone: Qt's QML disk cache is keyed on a file's path and time, so a file
whose bytes change but whose time does not would keep its old compiled page
after the same version is installed again.  Under ``SOURCE_DATE_EPOCH`` a
file whose own time is older than its content time keeps it (the clamp of the
reproducible-builds convention).
"""

from __future__ import annotations

import os

from .errors import BuildError

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "CONTENT_SPREAD",
    "FALLBACK_EPOCH",
    "MAX_EPOCH",
    "content_time",
    "package_timestamp",
    "source_date_epoch",
]

#: Timestamp used when SOURCE_DATE_EPOCH is unset: 1980-01-01T00:00:00Z, the
#: zip epoch that wheels use too.  A fixed value keeps builds reproducible.
FALLBACK_EPOCH = 315532800
#: The latest SOURCE_DATE_EPOCH: the gzip header holds a 32-bit time
#: (2106-02-07T06:28:15Z); the ar header's 12 digits and tar's fields hold more.
MAX_EPOCH = 0xFFFF_FFFF
#: Files' times lie in the CONTENT_SPREAD seconds up to the package's timestamp
#: (2**24 s, 194 days): two versions of a file share a time once in 16 million.
CONTENT_SPREAD = 1 << 24


def source_date_epoch(environ: Mapping[str, str] | None = None) -> int | None:
    """SOURCE_DATE_EPOCH parsed strictly: a whole number from 0 to :data:`MAX_EPOCH`,
    or one error naming the variable and the range (before anything is written)."""
    value = (os.environ if environ is None else environ).get("SOURCE_DATE_EPOCH")
    if value is None or value == "":
        return None
    # Length first (leading zeros aside): int() of thousands of digits is slow, and
    # refused past 4,300.
    digits = value.lstrip("0") or "0"
    if len(digits) > 10 or not value.isascii() or not value.isdigit() or int(digits) > MAX_EPOCH:
        shown = value if len(value) <= 40 else value[:40] + "..."
        raise BuildError(
            f"SOURCE_DATE_EPOCH={shown!r} is not a whole number of seconds since 1970 from 0 "
            f"to {MAX_EPOCH} (2106-02-07, the latest time a gzip header holds)")
    return int(digits)


def package_timestamp() -> int:
    """The one timestamp of a build: SOURCE_DATE_EPOCH, or the fixed fallback."""
    sde = source_date_epoch()
    return FALLBACK_EPOCH if sde is None else sde


def content_time(stamp: int, digest: bytes) -> int:
    """A file's time from its content's ``digest`` (its md5): up to
    :data:`CONTENT_SPREAD` seconds before ``stamp``, never before 1970."""
    span = min(CONTENT_SPREAD, stamp + 1) if stamp >= 0 else 1
    return stamp - int.from_bytes(digest[:8], "big") % span
