"""Source tree -> staged entries -> .click, streaming every file exactly once.

Data flows one way: :func:`stage_tree` (or a build integration) produces a
sorted list of :class:`Entry`; :func:`build_click` streams them into
``data.tar.gz`` while computing md5sums and the installed size, then writes
the control archive and the ar container, and renames the result into place.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterable, Mapping, Sequence

from . import _console, deflate
from .archive import (
    READ_CHUNK,
    GzipBlockWriter,
    TarWriter,
    copy_range,
    write_ar_header,
    write_ar_member,
)
from .atomicfile import AtomicFile, new_file_mode
from .datatree import path_problem
from .elf import HEADER_SIZE, ElfInfo, parse_elf_header
from .errors import ArchiveError, BuildError, ClickError
from .manifest import Manifest
from .md5check import md5_for
from .pkgfile import anonymous_file
from .spec import CLICK_VERSION, STATIC_PREINST
from .staging import (
    DEFAULT_IGNORES,
    SOURCE_IGNORES,
    Entry,
    Folders,
    IgnoreRules,
    normalise_mode,
    open_staged,
    stage_tree,
)
from .timestamps import (
    FALLBACK_EPOCH,
    MAX_EPOCH,
    content_time,
    package_timestamp,
    source_date_epoch,
)
from .versions import epochless

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time

if TYPE_CHECKING:
    from typing import Any, BinaryIO

__all__ = [
    "COMPRESS_LEVEL",
    "DEFAULT_IGNORES",
    "FALLBACK_EPOCH",
    "IgnoreRules",
    "SOURCE_IGNORES",
    "Entry",
    "Packed",
    "Packing",
    "build_click",
    "build_source",
    "check_output_dir",
    "check_level",
    "control_text",
    "installed_size_kib",
    "normalise_mode",
    "package_timestamp",
    "source_date_epoch",
    "stage_tree",
    "write_package",
]

_DIR_SIZE = 4096  # what du --apparent-size counts per directory on ext4
#: gzip level of the archives: 9, as ``dpkg-deb -Zgzip`` and the original use.
#: Packages are downloaded to phones: level 6 was 1% larger on app source
#: (benchmarks/bench_build.py's text tree, Qt's own QML and JS), and the extra
#: CPU of level 9 is spread over all cores.
COMPRESS_LEVEL = 9


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


class Packed:
    """One package's ``data.tar.gz``, packed into a nameless file beside the output.

    ``entries``: the package's entries, completed and in archive order; ``md5sums``:
    (md5, path) of every regular file; ``code``: the ELF code among them (arcname ->
    header, noted from the bytes packed); ``size``: the bytes of ``data``.
    """

    __slots__ = ("code", "data", "entries", "md5sums", "size")

    def __init__(self, entries: list[Entry], data: BinaryIO) -> None:
        self.entries = entries
        self.data = data
        self.md5sums: list[tuple[str, str]] = []
        self.code: dict[str, ElfInfo] = {}
        self.size = 0


class Packing:
    """``with Packing(lists, outdir, stamp) as packed:`` each list of entries packed into
    its own :class:`Packed`, reading each staged file once however many lists hold it.

    The lists are walked together in archive order; a file that several of them pack
    (the same source at the same path: a build for several frameworks of one tree) is
    read once and each chunk goes to every archive that packs it, as do its md5 sum,
    its time from the content and its ELF header.  Each file is opened by
    :func:`~click_build.staging.open_staged` (in its folder, no link followed, the file
    the walk saw) and gets the time its content gives
    (:func:`~click_build.timestamps.content_time`, below ``stamp``; an older time of its
    entry is kept).  ``kept``: files already read by the caller (source path -> bytes),
    packed from those bytes.  The nameless files close when the block ends.
    """

    def __init__(self, lists: Sequence[Sequence[Entry]], outdir: str, stamp: int,
                 level: int = COMPRESS_LEVEL, kept: Mapping[str, bytes] | None = None,
                 label: str = "packing") -> None:
        check_level(level)
        self.packed: list[Packed] = []
        try:
            for entries in lists:
                complete = _complete(entries, stamp)
                _check_has_files(complete)
                self.packed.append(Packed(complete, anonymous_file(outdir)))
            _pack(self.packed, stamp, level, kept or {}, label)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        for p in self.packed:
            p.data.close()

    def __enter__(self) -> list[Packed]:
        return self.packed

    def __exit__(self, *exc: object) -> None:
        self.close()


def _pack(packs: Sequence[Packed], stamp: int, level: int, kept: Mapping[str, bytes],
          label: str) -> None:
    writers = [_gzip_tar(p.data, stamp, level) for p in packs]
    by_name = [{e.arcname: e for e in p.entries} for p in packs]
    names = sorted({e.arcname for p in packs for e in p.entries}, key=_name_order)
    files = sum(e.size for p in packs for e in p.entries if e.kind == "file")
    md5 = md5_for(files)
    for _gz, tar in writers:
        tar.add_dir("./", 0o755, stamp)
    with _console.Progress(label, len(names)) as progress, Folders() as folders:
        for arcname in names:
            name = "./" + arcname
            readers: dict[str, list[int]] = {}  # source -> the packs that hold it here
            for i, table in enumerate(by_name):
                e = table.get(arcname)
                if e is None:
                    continue
                tar = writers[i][1]
                if e.kind == "dir":
                    tar.add_dir(name, e.mode, e.mtime)
                elif e.kind == "symlink":
                    tar.add_symlink(name, e.target, e.mtime)
                else:
                    assert e.source is not None
                    readers.setdefault(e.source, []).append(i)
            for source, which in readers.items():
                _pack_file(name, [(packs[i], by_name[i][arcname], writers[i][1]) for i in which],
                           stamp, md5(), kept.get(source), folders)
            progress.advance()
    for p, (gz, tar) in zip(packs, writers):
        tar.close()
        gz.close()
        p.size = p.data.tell()


def _pack_file(name: str, into: list[tuple[Packed, Entry, TarWriter]], stamp: int,
               digest: Any, data: bytes | None, folders: Folders) -> None:
    """One staged file, read once, into every archive of ``into``."""
    first = into[0][1]
    assert first.source is not None
    try:
        members = []
        for _p, e, tar in into:
            def file_time(e: Entry = e) -> int:
                return min(e.mtime, content_time(stamp, digest.digest()))

            members.append(tar.begin_file(name, e.size, e.mode, file_time))
        with open_staged(first, folders) if data is None else io.BytesIO(data) as f:
            remaining, head = first.size, True
            while remaining:
                chunk = f.read(min(remaining, READ_CHUNK))
                if not chunk:
                    raise ArchiveError(f"{name}: file shrank while it was being packed")
                if head:
                    head = False
                    info = parse_elf_header(chunk[:HEADER_SIZE])
                    if info is not None and info.is_code:
                        for p, e, _tar in into:
                            p.code[e.arcname] = info
                digest.update(chunk)
                for member in members:
                    member.write(chunk)
                remaining -= len(chunk)
            if f.read(1):
                raise ArchiveError(f"{name}: file grew while it was being packed")
        for member in members:
            member.end()
    except OSError as err:
        raise BuildError(f"{first.source}: cannot read: {err.strerror}") from None
    except ArchiveError as err:
        raise BuildError(f"{first.source}: {err}") from None
    for p, e, _tar in into:
        p.md5sums.append((digest.hexdigest(), e.arcname))


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
    kept: Mapping[str, bytes] | None = None,
    check: Callable[[str, str], object] | None = None,
) -> str:
    """Write ``NAME_VERSION_ARCH.click`` into ``outdir`` and return its path: the data
    packed (:class:`Packing`), then the package written (:func:`write_package`).

    ``manifest_size``: the bytes of the manifest.json that was in the tree (see
    :func:`installed_size_kib`).  ``level`` is the gzip level of both archives (0-9).
    ``kept``: files the caller has read already (source path -> bytes), packed from
    those.  ``check``: see :func:`write_package`.
    """
    check_level(level)
    outdir = os.fspath(outdir)
    check_output_dir(outdir)
    stamp = _checked_stamp(mtime)
    try:
        with Packing([entries], outdir, stamp, level, kept,
                     f"packing {manifest.filename}") as (packed,):
            return write_package(manifest, packed, outdir, stamp, manifest_size, level, check)
    except ClickError:
        raise
    except OSError as e:
        raise BuildError(f"cannot write {os.path.join(outdir, manifest.filename)}: "
                         f"{e.strerror}") from None


def write_package(manifest: Manifest, packed: Packed, outdir: str, stamp: int,
                  manifest_size: int = 0, level: int = COMPRESS_LEVEL,
                  check: Callable[[str, str], object] | None = None) -> str:
    """The package of ``manifest`` around its packed data, in ``outdir``: its path.

    The control archive is made from the manifest and what the packing counted, then
    the ar container; the result appears atomically
    (:class:`~click_build.atomicfile.AtomicFile`): nothing is under the package's name
    until it is complete and ``check`` has passed.  ``check(path, final)``: called on the
    complete package (at ``path``, to be named ``final``) before it gets its name;
    raising stops the build and leaves nothing behind (the build's review).
    """
    target = os.path.join(outdir, manifest.filename)
    kib = installed_size_kib(packed.entries, manifest_size)
    control = _control_tar(
        [
            ("control", control_text(manifest, kib).encode("utf-8"), 0o644),
            ("manifest", manifest.control_manifest_bytes(kib), 0o644),
            ("md5sums", "".join(f"{h}  {p}\n" for h, p in packed.md5sums).encode(
                "utf-8", "surrogateescape"), 0o644),
            ("preinst", STATIC_PREINST, 0o755),
        ],
        stamp,
        level,
    )
    try:
        with AtomicFile(target, new_file_mode(0o644)) as output:
            out = output.file
            out.write(b"!<arch>\n")
            write_ar_member(out, "debian-binary", b"2.0\n", stamp)
            write_ar_member(out, "_click-binary", f"{CLICK_VERSION}\n".encode(), stamp)
            write_ar_member(out, "control.tar.gz", control, stamp)
            write_ar_header(out, "data.tar.gz", packed.size, stamp)
            packed.data.seek(0)
            copy_range(packed.data, out, packed.size)
            if packed.size % 2:
                out.write(b"\n")
            output.publish(None if check is None else lambda temp: check(temp, target))
    except ClickError:
        raise
    except OSError as e:
        raise BuildError(f"cannot write {target}: {e.strerror}") from None
    return target


def _checked_stamp(mtime: int | None) -> int:
    """The package's timestamp; a caller's own value is held to SOURCE_DATE_EPOCH's range."""
    if mtime is None:
        return package_timestamp()
    if not 0 <= mtime <= MAX_EPOCH:
        raise BuildError(f"package time {mtime} is not from 0 to {MAX_EPOCH}")
    return mtime


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
    ``./manifest.json``, the file ``manifest_path``; as atomic as :func:`build_click`."""
    check_level(level)
    outdir = os.fspath(outdir)
    check_output_dir(outdir)
    stamp = _checked_stamp(mtime)
    name = f"{package}_{epochless(version)}.tar.gz"
    target = os.path.join(outdir, name)
    entries = [e for e in entries if e.arcname != "manifest.json"]
    real = os.path.realpath(manifest_path)  # a link the user made: the file it names
    try:
        st = os.stat(real)
    except OSError as e:
        raise BuildError(f"{manifest_path}: {e.strerror}") from None
    manifest_entry = Entry("manifest.json", "file", 0o644, st.st_size, stamp, real,
                           dev=st.st_dev, ino=st.st_ino)
    staged = _complete([*entries, manifest_entry], stamp)
    try:
        with AtomicFile(target, new_file_mode(0o644)) as output:
            _pack([Packed(staged, output.file)], stamp, level, {}, f"packing {name}")
            output.publish()
    except ClickError:
        raise
    except OSError as e:
        raise BuildError(f"cannot write {target}: {e.strerror}") from None
    return target


def _tar_order(e: Entry) -> list[str]:
    """Depth-first order with sorted siblings, as stage_tree walks."""
    return _name_order(e.arcname)


def _name_order(arcname: str) -> list[str]:
    return arcname.split("/")

