"""Reading a .click: every byte audited before anyone acts on it.

:func:`open_click` checks the container and the control archive (cheap,
enough for ``info``).  :func:`audit` checks what the control data says
(fields, preinst, manifest, framework, architecture) and then streams the
data archive once through :func:`scan_data`, which checks every path, type,
mode, size and md5 sum and can hand each entry to a sink (the installer's
unpacker) as it goes.  A package is trusted only when the scan completes.
"""

from __future__ import annotations

import gzip
import io
import os
import posixpath
import stat
import sys
import tarfile
import zlib
from collections.abc import Iterator

from ._record import Record
from .archive import ArMember, MemberReader, read_ar_members
from .deb822 import parse_control
from .errors import ArchiveError, ClickError, PackageError
from .frameworks import validate_framework
from .manifest import Manifest, dump_manifest, parse_json_object
from .spec import (
    ACCEPTED_PREINSTS,
    CLICK_VERSION,
    FORBIDDEN_FIELDS,
    MAINTAINER_SCRIPTS,
    SIGNATURE_PREFIX,
)
from .versions import compare_versions

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

try:  # CPython's built-in md5: hashlib's OpenSSL binding adds ~4 ms to every install
    from _md5 import md5  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - interpreters without it
    from hashlib import md5


__all__ = [
    "open_tar",
    "read_errors",
    "ClickPackage",
    "DataEntry",
    "ScanResult",
    "audit",
    "audit_control",
    "open_click",
    "resolve_in_package",
    "scan_data",
]

CONTROL_FILES = ("control", "manifest", "md5sums", "preinst")
MAX_CONTROL_ARCHIVE = 4 << 20  # compressed control.tar.*
MAX_CONTROL_FILE = 1 << 20  # each decompressed control member
MAX_ENTRIES = 250_000
SIZE_MARGIN = 1 << 20  # data may exceed Installed-Size by this much
_COMPRESSORS = {".gz": b"\x1f\x8b", ".xz": b"\xfd7zXZ\x00", ".bz2": b"BZh", "": b""}


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
    md5sums_raw: bytes
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
            if not name.startswith(want) or ext not in _COMPRESSORS:
                raise PackageError(
                    f"member {i + 1} is {name!r} where {want}.gz was expected "
                    f"(members: {', '.join(names)})"
                )
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


def _decompress(raw: MemberReader, name: str) -> IO[bytes]:
    ext = name[name.index(".tar") + 4:]
    magic = _COMPRESSORS[ext]
    head = raw.read(len(magic))
    raw.seek(0)
    if head != magic:
        raise PackageError(f"{name}: its content is not {ext[1:] or 'tar'} data")
    buffered = io.BufferedReader(raw, 1 << 20)
    if ext == ".gz":
        return gzip.GzipFile(fileobj=buffered, mode="rb")  # type: ignore[return-value]
    if ext == ".xz":
        import lzma

        return lzma.LZMAFile(buffered)
    if ext == ".bz2":
        import bz2

        return bz2.BZ2File(buffered)
    return buffered


_BASE_READ_ERRORS: tuple[type[BaseException], ...] = (
    tarfile.TarError, EOFError, OSError, zlib.error, ValueError, UnicodeError, OverflowError,
)


def read_errors() -> tuple[type[BaseException], ...]:
    """What a corrupt member can raise; lzma's error only once lzma is loaded (xz data)."""
    lzma = sys.modules.get("lzma")
    return _BASE_READ_ERRORS + ((lzma.LZMAError,) if lzma is not None else ())


def open_tar(pkg_file: BinaryIO, member: ArMember) -> tarfile.TarFile:
    stream = _decompress(MemberReader(pkg_file, member.offset, member.size), member.name)
    try:
        return tarfile.open(fileobj=stream, mode="r|", bufsize=1 << 16, encoding="utf-8",
                            errors="surrogateescape")
    except read_errors() as e:
        raise PackageError(f"{member.name}: not a valid tar archive ({e})") from None


def _read_control_archive(f: BinaryIO, member: ArMember) -> dict[str, bytes]:
    if member.size > MAX_CONTROL_ARCHIVE:
        raise PackageError(f"{member.name} is implausibly large ({member.size} bytes)")
    files: dict[str, bytes] = {}
    try:
        with open_tar(f, member) as tar:
            for info in tar:
                name = info.name[2:] if info.name.startswith("./") else info.name
                if name in ("", "."):
                    if not info.isdir():
                        raise PackageError(f"{member.name}: root entry is not a directory")
                    continue
                if name in MAINTAINER_SCRIPTS and name != "preinst":
                    raise PackageError(
                        f"maintainer script {name!r} is not allowed in Click packages"
                    )
                if name not in CONTROL_FILES:
                    raise PackageError(f"{member.name}: unexpected member {info.name!r}")
                if not info.isreg():
                    raise PackageError(f"{member.name}: {name} is not a regular file")
                if name in files:
                    raise PackageError(f"{member.name}: {name} appears twice")
                if info.size > MAX_CONTROL_FILE:
                    raise PackageError(f"{member.name}: {name} is implausibly large")
                data = tar.extractfile(info)
                assert data is not None
                files[name] = data.read()
    except ClickError:
        raise
    except read_errors() as e:
        raise PackageError(f"{member.name}: corrupt archive ({e})") from None
    return files


def _parse_md5sums(raw: bytes) -> dict[str, str]:
    sums: dict[str, str] = {}
    for number, line in enumerate(raw.decode("utf-8", "surrogateescape").splitlines(), 1):
        if not line:
            continue
        digest, sep, path = line[:32], line[32:34], line[34:]
        if (len(digest) != 32 or any(c not in "0123456789abcdef" for c in digest)
                or sep not in ("  ", " *") or not path):
            raise PackageError(f"md5sums: line {number} is not 'MD5  path'")
        path = path[2:] if path.startswith("./") else path
        if _path_problem(path):
            raise PackageError(f"md5sums: line {number}: {_path_problem(path)}")
        if path in sums:
            raise PackageError(f"md5sums: {path} is listed twice")
        sums[path] = digest
    return sums


def open_click(source: str | os.PathLike[str] | BinaryIO) -> ClickPackage:
    """Open a .click and check its container and control archive.

    Raises :class:`PackageError` for anything malformed; never another error
    for bad input.
    """
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        try:
            f: BinaryIO = open(path, "rb")
        except OSError as e:
            raise PackageError(f"{path}: cannot open: {e.strerror}") from None
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
    files = _read_control_archive(f, control_member)
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
        manifest_data, files.get("md5sums", b""), files.get("preinst"), click_binary, owns,
    )


# -------------------------------------------------------------- control ---

def _click_version_ok(value: str) -> bool:
    parts = value.split(".")
    return all(p.isdigit() and p.isascii() for p in parts) and compare_versions(
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
    if size is None or not size.isdigit():
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
    from hashlib import _Hash
    from typing import IO, BinaryIO, Literal, Protocol

    class DataSink(Protocol):
        """Receives each checked entry in archive order (the installer's unpacker)."""

        def directory(self, entry: DataEntry) -> None: ...

        def file(self, entry: DataEntry, chunks: Iterator[bytes]) -> None: ...

        def symlink(self, entry: DataEntry) -> None: ...

        def hardlink(self, entry: DataEntry) -> None: ...


class ScanResult:
    """What a scan saw: counts, and every path's kind for link resolution."""

    def __init__(self) -> None:
        self.entries = 0
        self.files = 0
        self.bytes = 0
        self.kinds: dict[str, str] = {}  # path -> kind
        self.symlinks: dict[str, str] = {}  # path -> target


def _path_problem(path: str) -> str | None:
    parts = path.split("/")
    if path.startswith("/"):
        return f"absolute path {path!r}"
    if any(p in ("", ".", "..") for p in parts):
        return f"path {path!r} is not clean (empty, '.' or '..' component)"
    if any(ord(c) < 32 for c in path):
        return f"path {path!r} contains a control character"
    return None


def _normalise_mode(info: tarfile.TarInfo, path: str) -> int:
    if info.mode & (stat.S_ISUID | stat.S_ISGID):
        raise PackageError(f"data: {path} has the setuid or setgid bit")
    if info.isdir() or info.mode & 0o111:
        return 0o755
    return 0o644


def _entry(info: tarfile.TarInfo, result: ScanResult) -> DataEntry:
    name = info.name
    if name in (".", "./"):
        if not info.isdir():
            raise PackageError("data: the package root is not a directory")
        return DataEntry("", "dir", 0o755, 0, int(info.mtime))
    if not name.startswith("./"):
        raise PackageError(f"data: member {name!r} does not start with './'")
    path = name[2:].rstrip("/") if info.isdir() else name[2:]
    problem = _path_problem(path)
    if problem:
        raise PackageError(f"data: {problem}")
    if path.split("/")[0] == ".click":
        raise PackageError(f"data: {path} is inside the reserved top-level .click directory")
    if path in result.kinds:
        raise PackageError(f"data: {path} appears twice")
    parent = posixpath.dirname(path)
    while parent:
        kind = result.kinds.get(parent)
        if kind is not None:
            if kind != "dir":
                raise PackageError(
                    f"data: {path} would be written through {parent}, which is a {kind}"
                )
            break
        result.kinds[parent] = "dir"  # implied by the path
        parent = posixpath.dirname(parent)
    mtime = int(info.mtime)
    if info.isdir():
        return DataEntry(path, "dir", _normalise_mode(info, path), 0, mtime,
                         stored_mode=info.mode & 0o7777)
    if info.isreg():
        if info.type not in (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.CONTTYPE):
            raise PackageError(f"data: {path} has an unsupported member type")
        return DataEntry(path, "file", _normalise_mode(info, path), info.size, mtime,
                         stored_mode=info.mode & 0o7777)
    if info.issym():
        if not info.linkname or "\0" in info.linkname:
            raise PackageError(f"data: symbolic link {path} has an empty target")
        return DataEntry(path, "symlink", 0o777, 0, mtime, info.linkname)
    if info.islnk():
        target = info.linkname[2:] if info.linkname.startswith("./") else info.linkname
        if _path_problem(target) or result.kinds.get(target) != "file":
            raise PackageError(
                f"data: hard link {path} -> {info.linkname} does not point to an earlier "
                "file of the package"
            )
        return DataEntry(path, "hardlink", 0o644, 0, mtime, target)
    what = {tarfile.CHRTYPE: "character device", tarfile.BLKTYPE: "block device",
            tarfile.FIFOTYPE: "fifo"}.get(info.type, f"member of type {info.type!r}")
    raise PackageError(f"data: {path} is a {what}; only files, directories and links are allowed")


def scan_data(pkg: ClickPackage, sink: DataSink | None = None) -> ScanResult:
    """Stream the data archive once, checking every entry and every md5 sum."""
    size = pkg.field("Installed-Size") or "0"
    declared = int(size) if size.isascii() and size.isdigit() else 0  # hostile: no crash
    budget = declared * 1024 + SIZE_MARGIN
    result = ScanResult()
    hashes: dict[str, str] = {}
    member = pkg.data_member
    try:
        with open_tar(pkg.file, member) as tar:
            for info in tar:
                result.entries += 1
                if result.entries > MAX_ENTRIES:
                    raise PackageError(f"data: more than {MAX_ENTRIES} entries")
                entry = _entry(info, result)
                if entry.path:
                    result.kinds[entry.path] = "file" if entry.kind == "hardlink" else entry.kind
                if entry.kind == "file":
                    result.bytes += entry.size
                    if result.bytes > budget:
                        raise PackageError(
                            f"data expands beyond the declared Installed-Size ({declared} KiB)"
                        )
                    stream = tar.extractfile(info)
                    assert stream is not None
                    digest = md5()
                    chunks = _hashed_chunks(stream, entry.size, digest)
                    if sink is not None:
                        sink.file(entry, chunks)
                    for _ in chunks:  # drain what the sink did not read
                        pass
                    hashes[entry.path] = digest.hexdigest()
                    result.files += 1
                elif entry.kind == "hardlink":
                    hashes[entry.path] = hashes[entry.target]
                    if sink is not None:
                        sink.hardlink(entry)
                elif entry.kind == "symlink":
                    result.symlinks[entry.path] = entry.target
                    result.bytes += len(entry.target)
                    if sink is not None:
                        sink.symlink(entry)
                elif sink is not None:
                    sink.directory(entry)
    except ClickError:
        raise
    except read_errors() as e:
        raise PackageError(f"{member.name}: corrupt archive ({e})") from None
    _check_md5sums(_parse_md5sums(pkg.md5sums_raw), hashes, result)
    return result


def _hashed_chunks(stream: IO[bytes], size: int, digest: _Hash) -> Iterator[bytes]:
    remaining = size
    while remaining:
        chunk = stream.read(min(remaining, 1 << 20))
        if not chunk:
            raise PackageError("data: archive ends inside a file")
        digest.update(chunk)
        remaining -= len(chunk)
        yield chunk


def _check_md5sums(listed: dict[str, str], actual: dict[str, str], result: ScanResult) -> None:
    for path, digest in actual.items():
        want = listed.get(path)
        if want is None:
            raise PackageError(f"md5sums: {path} is not listed")
        if want != digest:
            raise PackageError(f"md5sums: {path} does not match its checksum (altered file)")
    for path, digest in listed.items():
        if path in actual:
            continue
        if path not in result.symlinks:
            raise PackageError(f"md5sums: {path} is listed but not in the package")
        # The original lists symlinks with their target's sum: check it when
        # the target is a file of this package, ignore it otherwise.
        resolved = resolve_in_package(path, result)
        if resolved in actual and actual[resolved] != digest:
            raise PackageError(f"md5sums: {path} does not match its checksum")


def resolve_in_package(path: str, result: ScanResult) -> str | None:
    """Follow the package's own symlinks; None when the path leaves the package."""
    parts = path.split("/")
    resolved: list[str] = []
    hops = 0
    while parts:
        part = parts.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            if not resolved:
                return None
            resolved.pop()
            continue
        candidate = "/".join([*resolved, part])
        target = result.symlinks.get(candidate)
        if target is None:
            resolved.append(part)
            continue
        hops += 1
        if hops > 40 or target.startswith("/"):
            return None
        parts = target.split("/") + parts
    return "/".join(resolved)


def audit(
    pkg: ClickPackage,
    frameworks_dir: str | os.PathLike[str],
    force_missing_framework: bool = False,
    architecture: str | None = None,
    sink: DataSink | None = None,
) -> tuple[Manifest, ScanResult]:
    """The full audit of ``verify`` (and, with a sink, the unpack of ``install``)."""
    manifest = audit_control(pkg, frameworks_dir, force_missing_framework, architecture)
    result = scan_data(pkg, sink)
    # The manifest check already refused absolute and '..' hook paths; what is left
    # is a path that reaches outside through the package's own symlinks.
    for app, hooks in manifest.hooks.items():
        for hook, target in hooks.items():
            if resolve_in_package(target, result) is None:
                raise PackageError(f"manifest: hooks.{app}.{hook}: {target!r} leaves the package")
    return manifest, result
