"""``contents``: a package's data listing, line for line as ``dpkg-deb -c`` prints it.

dpkg-deb lists with GNU ``tar -tv``; this reproduces that format (column
widths that only grow, local time, tar's escape quoting) without either tool.
Names are shown as stored, hostile ones included: listing trusts nothing.
"""

from __future__ import annotations

import os
import stat
import tarfile
import time
from collections.abc import Iterator

from .errors import ClickError, PackageError
from .package import ClickPackage, open_tar, read_errors

__all__ = ["contents_lines"]


def _quote(name: str) -> str:
    """GNU tar's default 'escape' quoting of names in listings."""
    out = []
    for ch in name:
        if ch == "\\":
            out.append("\\\\")
        elif ch in "\a\b\f\n\r\t\v":
            out.append("\\" + "abfnrtv"["\a\b\f\n\r\t\v".index(ch)])
        elif ord(ch) < 32 or ord(ch) == 127 or 0xDC80 <= ord(ch) <= 0xDCFF:
            raw = os.fsencode(ch) if 0xDC80 <= ord(ch) <= 0xDCFF else ch.encode()
            out.extend(f"\\{b:03o}" for b in raw)
        else:
            out.append(ch)
    return "".join(out)


def contents_lines(pkg: ClickPackage) -> Iterator[str]:
    """The data listing in ``dpkg-deb -c`` (GNU ``tar -tv``) format."""
    width = 19  # tar's initial user/group/size column width; it only grows
    try:
        with open_tar(pkg.file, pkg.data_member) as tar:
            for info in tar:
                typechar = {tarfile.DIRTYPE: "d", tarfile.SYMTYPE: "l", tarfile.LNKTYPE: "h",
                            tarfile.CHRTYPE: "c", tarfile.BLKTYPE: "b",
                            tarfile.FIFOTYPE: "p"}.get(info.type, "-")
                modes = typechar + stat.filemode(info.mode)[1:]
                user = info.uname or str(info.uid)
                group = info.gname or str(info.gid)
                size = (f"{info.devmajor},{info.devminor}" if info.ischr() or info.isblk()
                        else str(info.size if info.isreg() else 0))
                pad = len(user) + 1 + len(group) + 1 + len(size)
                width = max(width, pad)
                when = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.mtime))
                name = info.name + ("/" if info.isdir() and info.name != "." else "")
                name = "./" if name == "." else name
                line = f"{modes} {user}/{group} {size:>{width - pad + len(size)}} {when} {_quote(name)}"
                if info.issym():
                    line += f" -> {_quote(info.linkname)}"
                elif info.islnk():
                    line += f" link to {_quote(info.linkname)}"
                yield line
    except ClickError:
        raise
    except read_errors() as e:
        raise PackageError(f"{pkg.data_member.name}: corrupt archive ({e})") from None

