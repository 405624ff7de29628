"""Reading a .click: every byte audited before anyone acts on it.

:func:`open_click` checks the container and the control archive (cheap,
enough for ``info``).  :func:`audit` checks what the control data says
(fields, preinst, manifest, framework, architecture) and then streams the
data archive once through :func:`scan_data`, which checks every path, type,
mode, size and md5 sum and can hand each entry to a sink (the installer's
unpacker) as it goes.  A package is trusted only when the scan completes.
"""

from __future__ import annotations

import io
import os
import stat

from ._record import Record
from .arread import ArMember, MemberReader, read_ar_members
from .datatree import DIR, EXEC, FILE, SYMLINK, TreeCheck, path_problem, shown
from .deb822 import parse_control, whole_number
from .errors import ArchiveError, PackageError
from .frameworks import validate_framework
from .manifest import Manifest, dump_manifest, parse_json_object
from .md5check import Md5Tally, bucket_of, check_md5sums, md5sums_lines
from .md5check import builtin_md5 as md5  # hashlib's OpenSSL binding costs every install ~4 ms
from .pkgfile import open_regular
from .spec import (
    ACCEPTED_PREINSTS,
    CLICK_VERSION,
    FORBIDDEN_FIELDS,
    MAINTAINER_SCRIPTS,
    SIGNATURE_PREFIX,
)
from .tarread import COMPRESSIONS, CONTROL_COMPRESSIONS, TarMember, TarReader, member_limit, open_stream
from .versions import compare_versions

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time


__all__ = [
    "ClickPackage",
    "DataEntry",
    "ScanResult",
    "audit",
    "audit_data",
    "audit_control",
    "open_click",
    "open_data",
    "resolve_in_package",
    "scan_data",
]

CONTROL_FILES = ("control", "manifest", "md5sums", "preinst")
MAX_CONTROL_FILE = 1 << 20  # control, manifest and preinst, each (md5sums is streamed)
#: md5sums bytes a line may take beyond its path: an md5, two separators, './', '\n'.
MD5SUMS_LINE = 32 + 2 + 2 + 1
MD5SUMS_SLACK = 64 << 10  # md5sums bytes beyond twice that, read to name what is wrong
MAX_LINKS = 1 << 16  # symbolic and hard links the audit keeps, to resolve them
MAX_LINK_BYTES = 16 << 20  # and the bytes of their names and targets
SIZE_MARGIN = 1 << 20  # data may exceed Installed-Size by this much
RESOLVE_STEPS = 1 << 22  # path components all link resolutions of a scan may walk
_PATH_MAX = 4096


class ClickPackage(Record):
    """A .click whose container and control archive have been checked."""

    path: str
    file: BinaryIO
    members: list[ArMember]
    control_member: ArMember
    data_member: ArMember
    signatures: list[ArMember]
    control: dict[str, str]
    manifest_data: dict[str, object]
    md5sums_size: int  # -1 when the control archive has no md5sums
    preinst: bytes | None
    click_binary: str
    owns_file: bool = False

    def field(self, name: str) -> str | None:
        """A control field, looked up case-insensitively."""
        for key, value in self.control.items():
            if key.lower() == name.lower():
                return value
        return None

    @property
    def name(self) -> str:
        return str(self.manifest_data.get("name", ""))

    @property
    def version(self) -> str:
        return str(self.manifest_data.get("version", ""))

    def info_json(self) -> str:
        """``click info`` output: the manifest without reserved keys, as the original."""
        return dump_manifest({k: v for k, v in self.manifest_data.items() if not k.startswith("_")})

    def member_reader(self, member: ArMember) -> MemberReader:
        return MemberReader(self.file, member.offset, member.size)

    def md5sums_chunks(self) -> Iterator[bytes]:
        """The md5sums file, streamed from the control archive (nothing if there is none).

        md5sums has a line per file, tens of MiB for a big app: read it this
        way rather than whole.
        """
        if self.md5sums_size < 0:
            return
        try:
            tar = _control_tar(self.file, self.control_member)
            for member in tar:
                if _control_name(member) == "md5sums":
                    yield from tar.data()
                    return
        except ArchiveError as e:
            raise PackageError(str(e)) from None
        raise PackageError(f"{self.control_member.name} changed while it was read")

    def close(self) -> None:
        if self.owns_file:
            self.file.close()

    def __enter__(self) -> ClickPackage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ------------------------------------------------------------ container ---

def _check_members(members: list[ArMember]) -> tuple[ArMember, ArMember, list[ArMember]]:
    names = [m.name for m in members]
    expected = ["debian-binary", "_click-binary", "control.tar", "data.tar"]
    for i, want in enumerate(expected):
        if i >= len(names):
            raise PackageError(f"member {want}* is missing (members: {', '.join(names) or 'none'})")
        name = names[i]
        if want.endswith(".tar"):
            ext = name[len(want):]
            if not name.startswith(want) or ext not in COMPRESSIONS:
                raise PackageError(
                    f"member {i + 1} is {name!r} where {want}.gz was expected "
                    f"(members: {', '.join(names)})"
                )
            if want == "control.tar" and ext not in CONTROL_COMPRESSIONS:
                # dpkg reads bzip2 and lzma data, never control
                raise PackageError(f"member 3 is {name!r}, a compression dpkg cannot "
                                   "read in a control archive; control.tar.gz was expected")
        elif name != want:
            if want == "_click-binary":
                raise PackageError(
                    f"member 2 is {name!r}: not a Click package (no _click-binary member)"
                )
            raise PackageError(f"member {i + 1} is {name!r} where {want} was expected")
    signatures = []
    for m in members[4:]:
        if not m.name.startswith(SIGNATURE_PREFIX):
            raise PackageError(f"unexpected member {m.name!r} after data.tar")
        signatures.append(m)
    if len({m.name for m in signatures}) != len(signatures):
        raise PackageError("a signature member appears twice")
    return members[2], members[3], signatures


def _tar(f: BinaryIO, member: ArMember, max_members: int | None = None) -> TarReader:
    """A bounded reader of the (compressed) tar archive in ``member``: by default
    of as many members as its size allows (:func:`~click_build.tarread.member_limit`)."""
    ext = member.name[member.name.index(".tar") + 4:]
    magic = COMPRESSIONS[ext]
    try:
        f.seek(member.offset)
        head = f.read(len(magic))
    except OSError as e:
        raise PackageError(f"cannot read {member.name}: {e.strerror}") from None
    if head != magic:
        raise PackageError(f"{member.name}: its content is not {ext[1:] or 'tar'} data")
    if max_members is None:
        max_members = member_limit(member.size)
    return TarReader(open_stream(f, member.offset, member.size, ext, member.name), member.name,
                     max_members)


def _control_tar(f: BinaryIO, member: ArMember) -> TarReader:
    return _tar(f, member, max_members=16)  # at most the root and four files


def _control_name(member: TarMember) -> str:
    return member.name.decode("utf-8", "surrogateescape").removeprefix("./")


def open_data(pkg: ClickPackage) -> TarReader:
    """A bounded reader of the data archive (errors are :class:`ArchiveError`)."""
    return _tar(pkg.file, pkg.data_member)


def _read_control_archive(f: BinaryIO, member: ArMember) -> tuple[dict[str, bytes], int]:
    """control, manifest and preinst whole (each capped); md5sums' size only."""
    files: dict[str, bytes] = {}
    md5sums_size = -1
    tar = _control_tar(f, member)
    try:
        for info in tar:
            name = _control_name(info)
            if name in ("", "."):
                if not info.isdir():
                    raise PackageError(f"{member.name}: root entry is not a directory")
                continue
            if name in MAINTAINER_SCRIPTS and name != "preinst":
                raise PackageError(
                    f"maintainer script {name!r} is not allowed in Click packages"
                )
            if name not in CONTROL_FILES:
                raise PackageError(f"{member.name}: unexpected member {name!r}")
            if not info.isreg():
                raise PackageError(f"{member.name}: {name} is not a regular file")
            if name in files or (name == "md5sums" and md5sums_size >= 0):
                raise PackageError(f"{member.name}: {name} appears twice")
            if name == "md5sums":
                md5sums_size = info.size
                continue
            if info.size > MAX_CONTROL_FILE:
                raise PackageError(f"{member.name}: {name} is implausibly large")
            files[name] = tar.read(MAX_CONTROL_FILE)
        # md5sums' bytes are read (and skipped) to the end: a truncated archive fails now
    except ArchiveError as e:
        raise PackageError(str(e)) from None
    return files, md5sums_size


def open_click(source: str | os.PathLike[str] | BinaryIO) -> ClickPackage:
    """Open a .click and check its container and control archive.

    A path must name a regular file (a FIFO, device, folder or socket is
    refused at once, never waited on).  Raises :class:`PackageError` for
    anything malformed; never another error for bad input.
    """
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        f = open_regular(path)
        owns = True
    else:
        f, path, owns = source, getattr(source, "name", "<stream>"), False
    try:
        return _open(f, str(path), owns)
    except BaseException:
        if owns:
            f.close()
        raise


def _open(f: BinaryIO, path: str, owns: bool) -> ClickPackage:
    try:
        size = f.seek(0, io.SEEK_END)
        members = read_ar_members(f, size)
    except ArchiveError as e:
        raise PackageError(f"{path}: {e}") from None
    except OSError as e:
        raise PackageError(f"{path}: cannot read: {e.strerror}") from None
    control_member, data_member, signatures = _check_members(members)

    def small(m: ArMember) -> bytes:
        if m.size > 64:
            raise PackageError(f"member {m.name} is implausibly large")
        f.seek(m.offset)
        return f.read(m.size)

    if small(members[0]) != b"2.0\n":
        raise PackageError("debian-binary does not contain '2.0'")
    click_binary = small(members[1]).decode("ascii", "replace").strip()
    files, md5sums_size = _read_control_archive(f, control_member)
    for required in ("control", "manifest"):
        if required not in files:
            raise PackageError(f"{control_member.name} has no {required} file")
    try:
        control_text = files["control"].decode("utf-8")
    except UnicodeDecodeError:
        raise PackageError("control: not valid UTF-8") from None
    control = parse_control(control_text)
    manifest_data = parse_json_object(files["manifest"], "manifest")
    return ClickPackage(
        path, f, members, control_member, data_member, signatures, control,
        manifest_data, md5sums_size, files.get("preinst"), click_binary, owns,
    )


# -------------------------------------------------------------- control ---

def _click_version_ok(value: str) -> bool:
    return all(whole_number(p) is not None for p in value.split(".")) and compare_versions(
        value, CLICK_VERSION) <= 0


def audit_control(
    pkg: ClickPackage,
    frameworks_dir: str | os.PathLike[str],
    force_missing_framework: bool = False,
    architecture: str | None = None,
) -> Manifest:
    """Everything the control data promises, checked before data is read.

    ``architecture`` (the machine's dpkg architecture) enables the install-time
    architecture check.
    """
    if not _click_version_ok(pkg.click_binary):
        raise PackageError(
            f"_click-binary says format {pkg.click_binary!r}; this tool reads {CLICK_VERSION} or older"
        )
    click_version = pkg.field("Click-Version")
    if click_version is None:
        raise PackageError("control: no Click-Version field (not a Click package)")
    if not _click_version_ok(click_version):
        raise PackageError(
            f"Click-Version {click_version} is newer than this tool supports ({CLICK_VERSION})"
        )
    for name in FORBIDDEN_FIELDS:
        if pkg.field(name) is not None:
            raise PackageError(f"control: {name} field is forbidden in Click packages")
    if pkg.preinst is not None and pkg.preinst not in ACCEPTED_PREINSTS:
        raise PackageError("control: preinst differs from the static one; maintainer scripts are forbidden")
    data = {k: v for k, v in pkg.manifest_data.items() if not k.startswith("_")}
    manifest = Manifest.from_dict(data, "manifest", purpose="install")
    for fieldname, expected in (("Package", manifest.name), ("Version", manifest.version),
                                ("Architecture", manifest.control_architecture)):
        value = pkg.field(fieldname)
        if value is not None and value != expected:
            raise PackageError(
                f"control {fieldname} {value!r} disagrees with the manifest's {expected!r}"
            )
        if value is None and fieldname != "Architecture":
            raise PackageError(f"control: no {fieldname} field")
    size = pkg.field("Installed-Size")
    if size is None or whole_number(size) is None:
        raise PackageError(f"control: Installed-Size {size!r} is not a whole number")
    validate_framework(manifest.framework, frameworks_dir, force_missing_framework)
    if architecture is not None:
        arch = manifest.architecture
        ok = arch == "all" or arch == architecture or (
            isinstance(arch, tuple) and architecture in arch)
        if not ok:
            raise PackageError(
                f"package architecture {manifest.control_architecture if isinstance(arch, tuple) else arch}"
                f"{' (' + ', '.join(arch) + ')' if isinstance(arch, tuple) else ''} "
                f"does not match system architecture {architecture}"
            )
    return manifest


# ----------------------------------------------------------------- data ---

class DataEntry(Record):
    """One data member, checked: a clean relative path and a normalised mode."""

    path: str  # "" for the package root
    kind: Literal["dir", "file", "symlink", "hardlink"]
    mode: int
    size: int
    mtime: int
    target: str = ""  # symlink target, or the package path a hardlink repeats
    stored_mode: int = -1  # permission bits as stored in the archive (for review)


if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from hashlib import _Hash
    from typing import BinaryIO, Literal, Protocol

    class DataSink(Protocol):
        """Receives each checked entry in archive order (the installer's unpacker)."""

        def directory(self, entry: DataEntry) -> None: ...

        def file(self, entry: DataEntry, chunks: Iterator[bytes]) -> None: ...

        def symlink(self, entry: DataEntry) -> None: ...

        def hardlink(self, entry: DataEntry) -> None: ...


_KIND_OF = {"dir": DIR, "symlink": SYMLINK}
_KIND_NAMES = {DIR: "dir", FILE: "file", EXEC: "file", SYMLINK: "symlink"}


class ScanResult:
    """What a scan saw: counts, the links (to resolve paths), and with
    ``index=True`` the kind of every path."""

    def __init__(self) -> None:
        self.entries = 0
        self.files = 0
        self.bytes = 0
        self.symlinks: dict[str, str] = {}  # path -> target
        self.hardlinks: dict[str, str] = {}  # path -> the file it repeats
        self.tree: TreeCheck | None = None
        self.resolve_steps = RESOLVE_STEPS  # left for resolve_in_package

    def kind(self, path: str) -> str | None:
        """'dir', 'file' or 'symlink' for a path the archive holds or implies; None if
        it does not.  Needs a scan with ``index=True``."""
        if path == "":
            return "dir"
        index = self.tree.index if self.tree is not None else None
        if index is None:
            raise ValueError("kind() needs a scan_data(..., index=True)")
        return _KIND_NAMES.get(index.get(path))

    def is_executable(self, path: str) -> bool:
        """A regular file (or hard link to one) with an execute bit; needs ``index=True``."""
        index = self.tree.index if self.tree is not None else None
        if index is None:
            raise ValueError("is_executable() needs a scan_data(..., index=True)")
        return index.get(path) == EXEC


#: Modification times a file system can be given (a 64-bit time_t); tar's base-256
#: and pax numbers reach far beyond, and os.utime() raises on those.
MTIME_RANGE = range(-(1 << 63) + 1, 1 << 63)


def _entry(member: TarMember) -> tuple[DataEntry, bytes]:
    """The checked entry of a member, and its path as the archive's bytes."""
    raw = member.name
    if member.mtime not in MTIME_RANGE:
        name = shown(raw.removeprefix(b"./").decode("utf-8", "surrogateescape") or ".")
        raise PackageError(f"data: {name} has a modification time ({member.mtime}) no file "
                           "system can hold")
    if raw in (b".", b"./"):
        if not member.isdir():
            raise PackageError("data: the package root is not a directory")
        return DataEntry("", "dir", 0o755, 0, member.mtime), b""
    if not raw.startswith(b"./"):
        name = raw.decode("utf-8", "surrogateescape")
        raise PackageError(f"data: member {name!r} does not start with './'")
    kind = member.type
    raw = raw[2:]
    if kind == b"5" and raw.endswith(b"/"):
        raw = raw[:-1]
    path = raw.decode("utf-8", "surrogateescape")
    problem = path_problem(path)
    if problem:
        raise PackageError(f"data: {problem}")
    mode = member.mode
    if mode & (stat.S_ISUID | stat.S_ISGID) and kind in (b"0", b"5"):
        raise PackageError(f"data: {shown(path)} has the setuid or setgid bit")
    if kind == b"0":
        return DataEntry(path, "file", 0o755 if mode & 0o111 else 0o644, member.size,
                         member.mtime, stored_mode=mode & 0o7777), raw
    if kind == b"5":
        return DataEntry(path, "dir", 0o755, 0, member.mtime, stored_mode=mode & 0o7777), raw
    if kind == b"2":
        target = member.linkname.decode("utf-8", "surrogateescape")
        if not target:
            raise PackageError(f"data: symbolic link {shown(path)} has an empty target")
        if len(member.linkname) >= _PATH_MAX:  # symlink(2) refuses it: ENAMETOOLONG
            raise PackageError(f"data: symbolic link {shown(path)} has a target of "
                               f"{len(member.linkname)} bytes; the limit is {_PATH_MAX - 1}")
        return DataEntry(path, "symlink", 0o777, 0, member.mtime, target), raw
    if kind == b"1":
        target = member.linkname.decode("utf-8", "surrogateescape").removeprefix("./")
        if path_problem(target):
            raise PackageError(f"data: hard link {shown(path)} -> {shown(target)} does not "
                               "point to an earlier file of the package")
        return DataEntry(path, "hardlink", 0o644, 0, member.mtime, target), raw
    what = {b"3": "character device", b"4": "block device", b"6": "fifo"}[kind]
    raise PackageError(f"data: {shown(path)} is a {what}; only files, directories and links "
                       "are allowed")


def _replay(pkg: ClickPackage) -> Callable[[int], Iterator[tuple[str, int]]]:
    """The (path, kind) of the archive's first members, read again (see TreeCheck)."""

    def replay(count: int) -> Iterator[tuple[str, int]]:
        if not count:
            return
        for member in open_data(pkg):
            entry, _raw = _entry(member)
            if entry.path:
                kind = _KIND_OF.get(entry.kind) or (EXEC if entry.mode & 0o111 else FILE)
                yield entry.path, kind
                count -= 1
                if not count:
                    return

    return replay


def scan_data(pkg: ClickPackage, sink: DataSink | None = None,
              index: bool = False) -> ScanResult:
    """Stream the data archive once, checking every entry and every md5 sum.

    ``index=True`` keeps the kind of every path for :meth:`ScanResult.kind`
    (8 bytes a path); without it the scan keeps nothing per member but links.
    """
    try:
        return _scan(pkg, sink, index)
    except ArchiveError as e:
        raise PackageError(str(e)) from None


def _scan(pkg: ClickPackage, sink: DataSink | None, index: bool) -> ScanResult:
    declared = whole_number(pkg.field("Installed-Size") or "0") or 0  # junk: refused by the audit
    budget = declared * 1024 + SIZE_MARGIN
    result = ScanResult()
    tree = result.tree = TreeCheck(_replay(pkg), index)
    tally = Md5Tally()
    links: dict[bytes, str] = {}
    link_bytes = 0
    listable = 0  # the bytes of md5sums' lines for these files and links, at most
    tar = open_data(pkg)
    root = False
    for member in tar:
        result.entries += 1
        entry, raw = _entry(member)
        kind = entry.kind
        if not entry.path:
            if root:
                raise PackageError("data: the package root appears twice")
            root = True
            if sink is not None:
                sink.directory(entry)
        elif kind == "file":
            tree.add(entry.path, EXEC if entry.mode & 0o111 else FILE)
            result.bytes += entry.size
            if result.bytes > budget:
                raise PackageError(
                    f"data expands beyond the declared Installed-Size ({declared} KiB)"
                )
            digest = md5()
            chunks = _hashed(tar.data(), digest)
            if sink is not None:
                sink.file(entry, chunks)
            for _ in chunks:  # drain what the sink did not read
                pass
            tally.add(raw, digest.hexdigest().encode("ascii"))
            result.files += 1
            listable += len(raw) + MD5SUMS_LINE
        elif kind == "dir":
            tree.add(entry.path, DIR)
            if sink is not None:
                sink.directory(entry)
        else:
            link_bytes += len(raw) + len(entry.target)
            if len(links) >= MAX_LINKS or link_bytes > MAX_LINK_BYTES:
                raise PackageError(f"data: more than {MAX_LINKS} links, or more than "
                                   f"{MAX_LINK_BYTES >> 20} MiB of link names and targets")
            links[raw] = entry.path
            listable += len(raw) + MD5SUMS_LINE
            if kind == "symlink":
                tree.add(entry.path, SYMLINK)
                result.symlinks[entry.path] = entry.target
                result.bytes += len(entry.target)
                if sink is not None:
                    sink.symlink(entry)
            else:
                tree.add_hardlink(entry.path, entry.target)
                result.hardlinks[entry.path] = entry.target
                if sink is not None:
                    sink.hardlink(entry)
    # md5sums has a line per file (and per link to one): far larger than those lines
    # can be, it is refused before it is read (it could hold gigabytes of nothing).  A
    # few lines too many are read, so that the check names the file they list.
    limit = 2 * listable + MD5SUMS_SLACK
    if pkg.md5sums_size > limit:
        raise PackageError(f"md5sums: {pkg.md5sums_size} bytes, far more than the lines of "
                           f"the {result.files} files and {len(links)} links of the data "
                           f"archive can take ({limit})")
    check_md5sums(
        tally, lambda: md5sums_lines(pkg.md5sums_chunks()), links, result.hardlinks,
        {link: resolve_in_package(link, result) for link in result.symlinks},
        lambda buckets: _rescan(pkg, buckets))
    return result


def _hashed(chunks: Iterable[bytes], digest: _Hash) -> Iterator[bytes]:
    for chunk in chunks:
        digest.update(chunk)
        yield chunk


def _rescan(pkg: ClickPackage, buckets: set[int]) -> Iterator[tuple[bytes, bytes]]:
    """(path, md5 hex) of the data files in ``buckets``: a diagnosis, read again."""
    tar = open_data(pkg)
    for member in tar:
        if not member.isreg():
            continue
        raw = _entry(member)[1]
        if bucket_of(raw) in buckets:
            digest = md5()
            for chunk in tar.data():
                digest.update(chunk)
            yield raw, digest.hexdigest().encode("ascii")


def resolve_in_package(path: str, result: ScanResult) -> str | None:
    """Follow the package's own symlinks; None when the path leaves the package.

    As the kernel resolves: at most 40 links followed, paths up to PATH_MAX.
    All the resolutions of one scan share a budget of steps, so that no set of
    links, however deep or many, costs more than a few seconds.
    """
    symlinks = result.symlinks
    parts = path.split("/")[::-1]  # a stack: the next component is last
    resolved: list[str] = []  # the resolved path so far, one entry per component
    hops = 0
    while parts:
        result.resolve_steps -= 1
        if result.resolve_steps < 0:
            raise PackageError("data: the package's symbolic links are too many or too "
                               "deep to resolve")
        part = parts.pop()
        if part in ("", "."):
            continue
        if part == "..":
            if not resolved:
                return None
            resolved.pop()
            continue
        candidate = f"{resolved[-1]}/{part}" if resolved else part
        if len(candidate) > _PATH_MAX:
            return None
        target = symlinks.get(candidate)
        if target is None:
            resolved.append(candidate)
            continue
        hops += 1
        if hops > 40 or target.startswith("/"):
            return None
        parts.extend(reversed(target.split("/")))
    return resolved[-1] if resolved else ""


def audit(
    pkg: ClickPackage,
    frameworks_dir: str | os.PathLike[str],
    force_missing_framework: bool = False,
    architecture: str | None = None,
    sink: DataSink | None = None,
) -> tuple[Manifest, ScanResult]:
    """The full audit of ``verify`` (and, with a sink, the unpack of ``install``)."""
    manifest = audit_control(pkg, frameworks_dir, force_missing_framework, architecture)
    return manifest, audit_data(pkg, manifest, sink)


def audit_data(pkg: ClickPackage, manifest: Manifest, sink: DataSink | None = None) -> ScanResult:
    """The data half of :func:`audit`, for ``manifest``, what :func:`audit_control`
    returned for this very ``pkg`` (the installer audits the control data before it
    forks the unpacker, which then audits the data as it writes it)."""
    result = scan_data(pkg, sink)
    # The manifest check already refused absolute and '..' hook paths; what is left
    # is a path that reaches outside through the package's own symlinks.
    for app, hooks in manifest.hooks.items():
        for hook, target in hooks.items():
            if resolve_in_package(target, result) is None:
                raise PackageError(f"manifest: hooks.{app}.{hook}: {target!r} leaves the package")
    return result
