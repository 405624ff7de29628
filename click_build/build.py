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


def _write_data(
    entries: Sequence[Entry], out: BinaryIO, mtime: int, label: str, level: int = COMPRESS_LEVEL,
    code: dict[str, ElfInfo] | None = None, kept: Mapping[str, bytes] | None = None,
) -> list[tuple[str, str]]:
    """Stream data.tar.gz; return (md5, path) for every regular file.

    Each file is opened by :func:`~click_build.staging.open_staged` (in its
    folder, no link followed, the file the walk saw) and gets the time its
    content gives (:func:`~click_build.timestamps.content_time`, below
    ``mtime``; an older time of its entry is kept).  ``code``: filled with
    the ELF code among the files (arcname -> header), read from the first
    bytes that are packed anyway.  ``kept``: files already read by the caller
    (source path -> bytes), packed from those bytes.
    """
    gz, tar = _gzip_tar(out, mtime, level)
    md5 = md5_for(sum(e.size for e in entries if e.kind == "file"))
    md5sums: list[tuple[str, str]] = []
    tar.add_dir("./", 0o755, mtime)
    kept = kept or {}
    with _console.Progress(label, len(entries)) as progress, Folders() as folders:
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

                def file_time(e: Entry = e, digest: Any = digest) -> int:
                    return min(e.mtime, content_time(mtime, digest.digest()))

                try:
                    data = kept.get(e.source)
                    with open_staged(e, folders) if data is None else io.BytesIO(data) as f:
                        tar.add_file(name, f, e.size, e.mode, file_time, on_chunk)
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
    check: Callable[[str, str], object] | None = None,
) -> str:
    """Write ``NAME_VERSION_ARCH.click`` into ``outdir`` and return its path.

    The result appears atomically (:class:`~click_build.atomicfile.AtomicFile`): nothing
    is under the package's name until it is complete and ``check`` has passed.
    ``manifest_size``: the bytes of the manifest.json that was in the tree
    (see :func:`installed_size_kib`).  ``level`` is the gzip level of both
    archives (0-9).  ``decide``: called once the data is packed, with the ELF
    code found in it (arcname -> header, from the bytes packed: each file is
    read once); it returns the final manifest and ``manifest_size``, and
    ``manifest`` only names the package while it is packed.  ``kept``: files
    the caller has read already (source path -> bytes), packed from those.
    ``check(path, final)``: called on the complete package (at ``path``, to be
    named ``final``) before it gets its name; raising stops the build and
    leaves nothing behind (the build's review).
    """
    check_level(level)
    outdir = os.fspath(outdir)
    check_output_dir(outdir)
    stamp = _checked_stamp(mtime)
    entries = _complete(entries, stamp)
    _check_has_files(entries)
    target = os.path.join(outdir, manifest.filename)
    code: dict[str, ElfInfo] | None = None if decide is None else {}
    label = (f"packing {manifest.filename}" if decide is None
             else f"packing {manifest.name} {manifest.version}")
    try:
        with anonymous_file(outdir) as data:
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
            with AtomicFile(target, new_file_mode(0o644)) as output:
                out = output.file
                out.write(b"!<arch>\n")
                write_ar_member(out, "debian-binary", b"2.0\n", stamp)
                write_ar_member(out, "_click-binary", f"{CLICK_VERSION}\n".encode(), stamp)
                write_ar_member(out, "control.tar.gz", control, stamp)
                write_ar_header(out, "data.tar.gz", data_size, stamp)
                data.seek(0)
                copy_range(data, out, data_size)
                if data_size % 2:
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
            _write_data(staged, output.file, stamp, f"packing {name}", level)
            output.publish()
    except ClickError:
        raise
    except OSError as e:
        raise BuildError(f"cannot write {target}: {e.strerror}") from None
    return target


def _tar_order(e: Entry) -> list[str]:
    """Depth-first order with sorted siblings, as stage_tree walks."""
    return e.arcname.split("/")

