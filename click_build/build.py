"""Source tree -> staged entries -> .click, streaming every file exactly once.

Data flows one way: :func:`stage_tree` (or a build integration) produces a
sorted list of :class:`Entry`; :func:`build_click` streams them into
``data.tar.gz`` while computing md5sums and the installed size, then writes
the control archive and the ar container, and renames the result into place.
"""

from __future__ import annotations

import fnmatch
import io
import os
import re
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence

from . import _console, deflate
from ._record import Record
from .archive import (
    GzipBlockWriter,
    TarWriter,
    copy_range,
    write_ar_header,
    write_ar_member,
)
from .datatree import path_problem
from .elf import HEADER_SIZE, ElfInfo, parse_elf_header
from .errors import ArchiveError, BuildError, ClickError
from .manifest import Manifest
from .md5check import md5_for
from .spec import CLICK_VERSION, STATIC_PREINST
from .versions import epochless

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from typing import BinaryIO, Literal

__all__ = [
    "COMPRESS_LEVEL",
    "DEFAULT_IGNORES",
    "FALLBACK_EPOCH",
    "IgnoreRules",
    "SOURCE_IGNORES",
    "Entry",
    "build_click",
    "build_source",
    "check_output_dir",
    "check_level",
    "control_text",
    "installed_size_kib",
    "package_timestamp",
    "source_date_epoch",
    "stage_tree",
]

#: dpkg-source's default ignores (``tar_ignore_default_pattern``), as the original.
DEFAULT_IGNORES: tuple[str, ...] = (
    "*.click", ".*.sw?", "*~", ",,*", ".[#~]*", ".arch-ids", ".arch-inventory",
    ".bzr", ".bzr-builddeb", ".bzr.backup", ".bzr.tags", ".bzrignore",
    ".cvsignore", ".git", ".gitattributes", ".gitignore", ".gitmodules", ".hg",
    ".hgignore", ".hgsigs", ".hgtags", ".shelf", ".svn", "CVS", "DEADJOE",
    "RCS", "_MTN", "_darcs", "{arch}",
)
#: ``buildsource`` also leaves out build products.
SOURCE_IGNORES: tuple[str, ...] = DEFAULT_IGNORES + (
    "*.a", ".be", ".deps", "*.la", "*.o", "*.so",
)


#: Timestamp used when SOURCE_DATE_EPOCH is unset: 1980-01-01T00:00:00Z, the
#: zip epoch that wheels use too.  A fixed value keeps builds reproducible.
FALLBACK_EPOCH = 315532800
_DIR_SIZE = 4096  # what du --apparent-size counts per directory on ext4
#: gzip level of the archives: 9, as ``dpkg-deb -Zgzip`` and the original use.
#: Packages are downloaded to phones: level 6 was 1% larger on app source
#: (benchmarks/bench_build.py's text tree, Qt's own QML and JS), and the extra
#: CPU of level 9 is spread over all cores.
COMPRESS_LEVEL = 9


class Entry(Record):
    """One member of the data tree: where it goes and where its bytes come from."""

    arcname: str  # relative POSIX path inside the package, no leading './'
    kind: Literal["file", "dir", "symlink"]
    mode: int = 0o644  # normalised permission bits
    size: int = 0
    mtime: int = FALLBACK_EPOCH
    source: str | None = None  # file to read, for kind == "file"
    target: str = ""  # for kind == "symlink"


def source_date_epoch(environ: dict[str, str] | None = None) -> int | None:
    """SOURCE_DATE_EPOCH parsed strictly: a non-negative integer or an error."""
    value = (os.environ if environ is None else environ).get("SOURCE_DATE_EPOCH")
    if value is None or value == "":
        return None
    if not value.isdigit() or not value.isascii():
        raise BuildError(
            f"SOURCE_DATE_EPOCH={value!r} is not a whole number of seconds since 1970"
        )
    return int(value)


def package_timestamp() -> int:
    """The one timestamp of a build: SOURCE_DATE_EPOCH, or the fixed fallback."""
    sde = source_date_epoch()
    return FALLBACK_EPOCH if sde is None else sde


def normalise_mode(path: str, st_mode: int) -> int:
    """0755 for directories and executables, 0644 otherwise; refuse special bits.

    A directory's setgid bit is not refused: it only gives new files the
    folder's group, every folder made inside a setgid folder inherits it (a
    checkout in a shared group folder has it throughout), and the package
    never carries it (directories are 0755).
    """
    special = st_mode & (stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX)
    if stat.S_ISDIR(st_mode):
        special &= ~stat.S_ISGID
    if special:
        names = [n for bit, n in ((stat.S_ISUID, "setuid"), (stat.S_ISGID, "setgid"),
                                  (stat.S_ISVTX, "sticky")) if special & bit]
        raise BuildError(
            f"{path}: has the {'/'.join(names)} bit set, which Click packages may not "
            f"carry; clear it with 'chmod u-s,g-s,-t {path}'"
        )
    if stat.S_ISDIR(st_mode) or st_mode & 0o111:
        return 0o755
    return 0o644


class IgnoreRules:
    """Shell patterns compiled into two regexes, checked once per tree entry.

    Patterns without a '/' match a base name at any depth (as the original);
    patterns with a '/' match the path relative to the top of the tree.
    """

    def __init__(self, patterns: Iterable[str]) -> None:
        names = [p for p in patterns if "/" not in p]
        paths = [p.strip("/") for p in patterns if "/" in p]
        self._name = _union(names)
        self._path = _union(paths)

    def __call__(self, name: str, relpath: str) -> bool:
        return bool(
            (self._name is not None and self._name.match(name))
            or (self._path is not None and self._path.match(relpath))
        )


def _union(patterns: list[str]) -> re.Pattern[str] | None:
    if not patterns:
        return None
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))


def stage_tree(
    root: str | os.PathLike[str],
    ignores: Iterable[str] = (),
    exclude: Iterable[str | os.PathLike[str]] = (),
    mtime_clamp: int | None = None,
    default_ignores: Sequence[str] = DEFAULT_IGNORES,
) -> list[Entry]:
    """Walk ``root`` in sorted order and describe what goes into the package.

    Patterns without a '/' match a base name at any depth (as the original);
    patterns with a '/' match the path relative to ``root``.  ``exclude``
    names files left out by identity (the manifest being packed).
    """
    root = os.fspath(root)
    ignored = IgnoreRules([*default_ignores, *ignores])
    excluded = set()
    for path in exclude:
        try:
            st = os.stat(path)
            excluded.add((st.st_dev, st.st_ino))
        except OSError:
            pass
    clamp = package_timestamp() if mtime_clamp is None else mtime_clamp
    sde = source_date_epoch()
    entries: list[Entry] = []

    def mtime_of(st: os.stat_result) -> int:
        if sde is None:
            return clamp
        return min(int(st.st_mtime), clamp)

    def walk(directory: str, prefix: str) -> None:
        try:
            with os.scandir(directory) as it:
                children = sorted(it, key=lambda e: e.name)
        except OSError as e:
            raise BuildError(f"{directory}: cannot list directory: {e.strerror}") from None
        for child in children:
            rel = prefix + child.name
            if ignored(child.name, rel):
                continue
            try:
                st = child.stat(follow_symlinks=False)
            except OSError as e:
                raise BuildError(f"{child.path}: {e.strerror}") from None
            if (st.st_dev, st.st_ino) in excluded:
                continue
            if rel == ".click":
                continue  # reserved for the installer's own data
            if stat.S_ISLNK(st.st_mode):
                target = os.readlink(child.path)
                try:
                    os.stat(child.path)
                except OSError as e:
                    if e.errno == 40:  # ELOOP
                        raise BuildError(
                            f"{child.path}: symbolic link loop ({child.name} -> {target})"
                        ) from None
                entries.append(Entry(rel, "symlink", 0o777, 0, mtime_of(st), target=target))
            elif stat.S_ISDIR(st.st_mode):
                mode = normalise_mode(child.path, st.st_mode)
                entries.append(Entry(rel, "dir", mode, 0, mtime_of(st)))
                walk(child.path, rel + "/")
            elif stat.S_ISREG(st.st_mode):
                mode = normalise_mode(child.path, st.st_mode)
                if not os.access(child.path, os.R_OK):
                    raise BuildError(f"{child.path}: file is not readable (permission denied)")
                entries.append(Entry(rel, "file", mode, st.st_size, mtime_of(st), child.path))
            else:
                raise BuildError(
                    f"{child.path}: is a device, fifo or socket; only files, directories "
                    "and symbolic links can go into a Click package"
                )

    try:
        top = os.stat(root)
    except OSError as e:
        raise BuildError(f"{root}: {e.strerror}") from None
    if not stat.S_ISDIR(top.st_mode):
        raise BuildError(f"{root}: is not a directory")
    walk(root, "")
    return entries


def installed_size_kib(entries: Iterable[Entry], manifest_size: int = 0) -> int:
    """Installed-Size from the entries alone, so it is the same on every machine.

    The original runs ``du -k -s --apparent-size`` in its build folder, which
    then holds ``data/`` (the copied tree, the manifest.json it read still in
    it) and an empty ``DEBIAN/``.  So this counts what ``du`` counts there on
    ext4: file bytes, symlink lengths, a 4 KiB block per directory (the tree's
    own, ``data/``, ``DEBIAN/`` and the build folder), plus ``manifest_size``,
    the bytes of the manifest.json the tree had; rounded up to KiB.
    """
    total = _DIR_SIZE * 3 + manifest_size  # the build folder, data/ and DEBIAN/
    for e in entries:
        if e.kind == "file":
            total += e.size
        elif e.kind == "symlink":
            total += len(os.fsencode(e.target))
        else:
            total += _DIR_SIZE
    return -(-total // 1024)


def control_text(manifest: Manifest, installed_size: int) -> str:
    """The deb822 control file, seven fields in the original's order."""
    return (
        f"Package: {manifest.name}\n"
        f"Version: {manifest.version}\n"
        f"Click-Version: {CLICK_VERSION}\n"
        f"Architecture: {manifest.control_architecture}\n"
        f"Maintainer: {manifest.maintainer}\n"
        f"Installed-Size: {installed_size}\n"
        f"Description: {manifest.title}\n"
    )


def check_level(level: int) -> int:
    """A gzip level, 0 (stored, no compression) to 9 (smallest, the default)."""
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level <= 9:
        raise BuildError(f"compression level {level!r} is not a whole number from 0 to 9")
    return level


def _gzip_tar(out: BinaryIO, mtime: int, level: int) -> tuple[GzipBlockWriter, TarWriter]:
    # CLICK_BUILD_DEFLATE is read for every build, so a bad value fails small ones too.
    gz = GzipBlockWriter(out, mtime, level, engine=deflate.chosen())
    return gz, TarWriter(gz, gz)  # type: ignore[arg-type]


def _write_data(
    entries: Sequence[Entry], out: BinaryIO, mtime: int, label: str, level: int = COMPRESS_LEVEL,
    code: dict[str, ElfInfo] | None = None, kept: Mapping[str, bytes] | None = None,
) -> list[tuple[str, str]]:
    """Stream data.tar.gz; return (md5, path) for every regular file.

    ``code``: filled with the ELF code among the files (arcname -> header),
    read from the first bytes that are packed anyway.  ``kept``: files already
    read by the caller (source path -> bytes), packed from those bytes.
    """
    gz, tar = _gzip_tar(out, mtime, level)
    md5 = md5_for(sum(e.size for e in entries if e.kind == "file"))
    md5sums: list[tuple[str, str]] = []
    tar.add_dir("./", 0o755, mtime)
    kept = kept or {}
    with _console.Progress(label, len(entries)) as progress:
        for e in entries:
            name = "./" + e.arcname
            if e.kind == "dir":
                tar.add_dir(name, e.mode, e.mtime)
            elif e.kind == "symlink":
                tar.add_symlink(name, e.target, e.mtime)
            else:
                assert e.source is not None
                digest = md5()
                on_chunk: Callable[[bytes], object] = digest.update
                if code is not None:
                    on_chunk = _ElfSniffer(e.arcname, code, digest.update)
                try:
                    data = kept.get(e.source)
                    with open(e.source, "rb") if data is None else io.BytesIO(data) as f:
                        tar.add_file(name, f, e.size, e.mode, e.mtime, on_chunk)
                except OSError as err:
                    raise BuildError(f"{e.source}: cannot read: {err.strerror}") from None
                except ArchiveError as err:
                    raise BuildError(f"{e.source}: {err}") from None
                md5sums.append((digest.hexdigest(), e.arcname))
            progress.advance()
    tar.close()
    gz.close()
    return md5sums


class _ElfSniffer:
    """Passes each chunk on, and notes an ELF header in the first one (every file
    is read once: the architecture scan shares the archive writer's read)."""

    __slots__ = ("arcname", "code", "update", "first")

    def __init__(self, arcname: str, code: dict[str, ElfInfo],
                 update: Callable[[bytes], object]) -> None:
        self.arcname, self.code, self.update, self.first = arcname, code, update, True

    def __call__(self, chunk: bytes) -> None:
        if self.first:
            self.first = False
            info = parse_elf_header(chunk[:HEADER_SIZE])
            if info is not None and info.is_code:
                self.code[self.arcname] = info
        self.update(chunk)


def _control_tar(files: list[tuple[str, bytes, int]], mtime: int, level: int) -> bytes:
    buf = io.BytesIO()
    gz, tar = _gzip_tar(buf, mtime, level)
    tar.add_dir("./", 0o755, mtime)
    for name, data, mode in files:
        tar.add_bytes("./" + name, data, mode, mtime)
    tar.close()
    gz.close()
    return buf.getvalue()


def _complete(entries: Iterable[Entry], mtime: int) -> list[Entry]:
    """Sorted, with every missing parent directory added, each path checked once."""
    by_name: dict[str, Entry] = {}
    for e in entries:
        _check_path(e.arcname)
        if e.arcname in by_name:
            raise BuildError(f"{e.arcname}: appears twice in the package")
        by_name[e.arcname] = e
    for name in list(by_name):
        parent = name.rpartition("/")[0]
        while parent and parent not in by_name:
            by_name[parent] = Entry(parent, "dir", 0o755, 0, mtime)
            parent = parent.rpartition("/")[0]
    for name in by_name:
        parent = name.rpartition("/")[0]
        if parent and by_name[parent].kind != "dir":
            raise BuildError(f"{name}: its parent {parent} is not a directory")
    return sorted(by_name.values(), key=_tar_order)


def _check_has_files(entries: Sequence[Entry]) -> None:
    """At least one regular file: the original's ``click verify`` runs ``md5sum -c`` on
    md5sums, which fails when it lists nothing, so a package of folders and links alone
    (or of its manifest alone) would not pass it, though it installs."""
    if not any(e.kind == "file" for e in entries):
        raise BuildError("the package would hold no files, only folders and links: the "
                         "original 'click verify' refuses a package with an empty md5sums; "
                         "add the app's files (a desktop file, an AppArmor file, ...)")


def _check_path(arcname: str) -> None:
    problem = path_problem(arcname)  # the reader's rule: what it would refuse, never written
    if problem:
        raise BuildError(f"cannot package {problem}")


def check_output_dir(outdir: str) -> None:
    """The output folder exists and we may write into it; else one clear error."""
    if not os.path.isdir(outdir):
        raise BuildError(f"output directory {outdir} does not exist")
    if not os.access(outdir, os.W_OK | os.X_OK):
        raise BuildError(f"output directory {outdir} is not writable")


def build_click(
    manifest: Manifest,
    entries: Sequence[Entry],
    outdir: str | os.PathLike[str] = ".",
    mtime: int | None = None,
    manifest_size: int = 0,
    level: int = COMPRESS_LEVEL,
    decide: Callable[[dict[str, ElfInfo]], tuple[Manifest, int]] | None = None,
    kept: Mapping[str, bytes] | None = None,
) -> str:
    """Write ``NAME_VERSION_ARCH.click`` into ``outdir`` and return its path.

    The result appears atomically: nothing named ``*.click`` exists until it
    is complete.  ``manifest_size``: the bytes of the manifest.json that was in
    the tree (see :func:`installed_size_kib`).  ``level`` is the gzip level of
    both archives (0-9).  ``decide``: called once the data is packed, with the
    ELF code found in it (arcname -> header, from the bytes packed: each file
    is read once); it returns the final manifest and ``manifest_size``, and
    ``manifest`` only names the package while it is packed.  ``kept``: files
    the caller has read already (source path -> bytes), packed from those.
    """
    check_level(level)
    outdir = os.fspath(outdir)
    check_output_dir(outdir)
    stamp = package_timestamp() if mtime is None else mtime
    entries = _complete(entries, stamp)
    _check_has_files(entries)
    target = os.path.join(outdir, manifest.filename)
    code: dict[str, ElfInfo] | None = None if decide is None else {}
    label = (f"packing {manifest.filename}" if decide is None
             else f"packing {manifest.name} {manifest.version}")
    try:
        with _anonymous_file(outdir) as data:
            md5sums = _write_data(entries, data, stamp, label, level, code, kept)
            if decide is not None:
                assert code is not None
                manifest, manifest_size = decide(code)
                target = os.path.join(outdir, manifest.filename)
            kib = installed_size_kib(entries, manifest_size)
            data_size = data.tell()
            control = _control_tar(
                [
                    ("control", control_text(manifest, kib).encode("utf-8"), 0o644),
                    ("manifest", manifest.control_manifest_bytes(kib), 0o644),
                    ("md5sums", "".join(f"{h}  {p}\n" for h, p in md5sums).encode(
                        "utf-8", "surrogateescape"), 0o644),
                    ("preinst", STATIC_PREINST, 0o755),
                ],
                stamp,
                level,
            )
            fd, tmpname = _temp_name(outdir, manifest.filename)
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(b"!<arch>\n")
                    write_ar_member(out, "debian-binary", b"2.0\n", stamp)
                    write_ar_member(out, "_click-binary", f"{CLICK_VERSION}\n".encode(), stamp)
                    write_ar_member(out, "control.tar.gz", control, stamp)
                    write_ar_header(out, "data.tar.gz", data_size, stamp)
                    data.seek(0)
                    copy_range(data, out, data_size)
                    if data_size % 2:
                        out.write(b"\n")
                os.chmod(tmpname, 0o644 & ~_umask())
                os.replace(tmpname, target)
            except BaseException:
                _unlink_quietly(tmpname)
                raise
    except ClickError:
        raise
    except OSError as e:
        raise BuildError(f"cannot write {target}: {e.strerror}") from None
    return target


def _anonymous_file(directory: str) -> BinaryIO:
    """A nameless scratch file on the output's file system (O_TMPFILE when there is one)."""
    flags = os.O_RDWR | getattr(os, "O_CLOEXEC", 0)
    if hasattr(os, "O_TMPFILE"):
        try:
            return os.fdopen(os.open(directory, flags | os.O_TMPFILE, 0o600), "w+b")
        except OSError:
            pass  # file systems without O_TMPFILE support
    fd, name = _temp_name(directory, "data")
    os.unlink(name)
    return os.fdopen(fd, "w+b")


def _temp_name(directory: str, final: str) -> tuple[int, str]:
    """Create ``.FINAL.<random>.tmp`` exclusively; the caller renames or removes it."""
    for _ in range(100):
        name = os.path.join(directory, f".{final}.{os.urandom(4).hex()}.tmp")
        try:
            return os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600), name
        except FileExistsError:
            continue
    raise BuildError(f"cannot create a temporary file in {directory}")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def build_source(
    package: str,
    version: str,
    manifest_path: str | os.PathLike[str],
    entries: Sequence[Entry],
    outdir: str | os.PathLike[str] = ".",
    mtime: int | None = None,
    level: int = COMPRESS_LEVEL,
) -> str:
    """A source tarball ``PACKAGE_VERSION.tar.gz`` (no epoch): the tree plus
    ``./manifest.json``, the file ``manifest_path``."""
    check_level(level)
    outdir = os.fspath(outdir)
    check_output_dir(outdir)
    stamp = package_timestamp() if mtime is None else mtime
    name = f"{package}_{epochless(version)}.tar.gz"
    target = os.path.join(outdir, name)
    entries = [e for e in entries if e.arcname != "manifest.json"]
    manifest_entry = Entry(
        "manifest.json", "file", 0o644, os.stat(manifest_path).st_size, stamp,
        os.fspath(manifest_path)
    )
    staged = _complete([*entries, manifest_entry], stamp)
    fd, tmpname = _temp_name(outdir, name)
    try:
        with os.fdopen(fd, "wb") as out:
            _write_data(staged, out, stamp, f"packing {name}", level)
        os.chmod(tmpname, 0o644 & ~_umask())
        os.replace(tmpname, target)
    except BaseException:
        _unlink_quietly(tmpname)
        raise
    return target


def _tar_order(e: Entry) -> list[str]:
    """Depth-first order with sorted siblings, as stage_tree walks."""
    return e.arcname.split("/")

