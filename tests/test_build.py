"""Building: packages that dpkg-deb, python-debian and the original click accept,
byte-identical rebuilds, and clean refusals of bad trees."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from build_support import build, data_member_size
from conftest import BASE_MANIFEST, CLICK_BUILD, assert_clean_error, need, run, write_tree

UTC = {"TZ": "UTC"}


def without_dac(cmd: list[str]) -> list[str]:
    """Run cmd so that file permissions apply even to root (drop DAC override)."""
    if os.geteuid() != 0:
        return cmd
    return [need("setpriv"), "--bounding-set", "-dac_override,-dac_read_search",
            "--inh-caps", "-dac_override,-dac_read_search", *cmd]


@pytest.mark.oracle
def test_dpkg_deb_reads_what_we_write(cli, make_app, tmp_path: Path) -> None:
    app = make_app(files={"lib/tool": "#!/bin/sh\n", "share/data.bin": bytes(range(256)) * 40,
                          "share/link": "-> ../main.qml"})
    (app / "lib/tool").chmod(0o700)
    click = build(cli, app, tmp_path / "out")
    fields = run(["dpkg-deb", "-f", str(click)]).stdout
    assert "Package: com.example.hello\n" in fields and "Click-Version: 0.4\n" in fields
    run(["dpkg-deb", "-I", str(click)])
    ours = cli("contents", click, env=UTC).stdout
    theirs = run(["dpkg-deb", "-c", str(click)], env=UTC).stdout
    assert ours == theirs
    assert "-rwxr-xr-x root/root" in theirs and "./share/link -> ../main.qml" in theirs
    extracted = tmp_path / "x"
    run(["dpkg-deb", "-x", str(click), str(extracted)])
    assert (extracted / "share/data.bin").read_bytes() == (app / "share/data.bin").read_bytes()
    assert not (extracted / "manifest.json").exists()
    assert os.readlink(extracted / "share/link") == "../main.qml"
    control = tmp_path / "c"
    run(["dpkg-deb", "-e", str(click), str(control)])
    sums = (control / "md5sums").read_text()
    run(["md5sum", "-c", "--quiet", str(control / "md5sums")], cwd=extracted)
    assert "share/link" not in sums and "lib/tool" in sums
    assert os.access(control / "preinst", os.X_OK)


@pytest.mark.oracle
def test_python_debian_reads_what_we_write(cli, make_app, tmp_path: Path) -> None:
    from debian.debfile import DebFile

    click = build(cli, make_app(), tmp_path / "out")
    deb = DebFile(str(click))
    try:
        assert deb.debcontrol()["Package"] == "com.example.hello"
        assert json.loads(deb.control.get_content("manifest"))["installed-size"]
        assert set(deb.md5sums()) == {b"hello.desktop", b"hello.apparmor", b"main.qml", b"icon.svg"}
        assert "./main.qml" in deb.data.tgz().getnames()
    finally:
        deb.close()


@pytest.mark.oracle
def test_original_click_accepts_and_agrees(cli, make_app, tmp_path: Path, original_click: str) -> None:
    app = make_app(files={"sub/dir/file.txt": "x\n"}, version="2:1.0~rc1-1",
                   architecture=["armhf", "arm64"], description="Long\n\ntext", **{"x-test": 1})
    click = build(cli, app, tmp_path / "out")
    assert click.name == "com.example.hello_1.0~rc1-1_multi.click"
    run([original_click, "verify", "--force-missing-framework", "--allow-unauthenticated", str(click)])
    assert cli("info", click).stdout == run([original_click, "info", str(click)]).stdout


@pytest.mark.oracle
def test_we_read_what_the_original_writes(cli, make_app, tmp_path: Path, original_click: str) -> None:
    app = make_app(files={"sub/link": "-> ../main.qml", "run.sh": "#!/bin/sh\n"})
    out = tmp_path / "orig"
    out.mkdir()
    run([original_click, "build", "--no-validate", str(app)], cwd=out)
    (click,) = out.glob("*.click")
    cli("verify", "--force-missing-framework", "--allow-unauthenticated", click)
    assert cli("info", click).stdout == run([original_click, "info", str(click)]).stdout
    assert cli("contents", click, env=UTC).stdout == run(
        [original_click, "contents", str(click)], env=UTC).stdout


def _touch_all(root: Path, when: float) -> None:
    for path in [root, *root.rglob("*")]:
        os.utime(path, (when, when), follow_symlinks=False)


@pytest.mark.parametrize("sde", [None, "1700000000"])
def test_reproducible_after_touch(cli, make_app, tmp_path: Path, sde: str | None) -> None:
    app = make_app(files={"a/b/c.txt": "c\n", "a/link": "-> b/c.txt", "big": os.urandom(300_000)})
    env = {"SOURCE_DATE_EPOCH": sde} if sde else {}
    if not sde:
        env = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
    first = build(cli, app, tmp_path / "one", env=env).read_bytes()
    _touch_all(app, 1_900_000_000)
    second = build(cli, app, tmp_path / "two", env=env).read_bytes()
    assert first == second


def _file_times(click: Path) -> dict[str, int]:
    """Each member's time in the data archive, as dpkg-deb reads it."""
    import io
    import tarfile

    raw = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(click)], check=True,
                         capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        return {m.name: int(m.mtime) for m in tar.getmembers()}


def _content_time(stamp: int, data: bytes) -> int:
    """docs/building.md's rule, written out: the md5's first 8 bytes, big-endian,
    modulo 2**24 seconds, below the package's timestamp."""
    return stamp - int.from_bytes(hashlib.md5(data).digest()[:8], "big") % (1 << 24)


def test_sde_clamps_and_stamps(cli, make_app, tmp_path: Path) -> None:
    app = make_app()
    _touch_all(app, 1_000_000_000)
    (app / "main.qml").touch()
    click = build(cli, app, tmp_path / "out", env={"SOURCE_DATE_EPOCH": "1600000000"})
    listing = cli("contents", click, env=UTC).stdout
    assert "2001-09-09 01:46 ./hello.desktop" in listing  # older than SDE: kept
    times = _file_times(click)
    # newer than SDE: clamped to the time its content gives, up to 194 days before SDE
    assert times["./main.qml"] == _content_time(1_600_000_000, (app / "main.qml").read_bytes())
    assert 1_600_000_000 - (1 << 24) < times["./main.qml"] <= 1_600_000_000
    assert times["."] == 1_600_000_000  # folders: the timestamp itself
    data = click.read_bytes()
    assert b"1600000000  0     0     100644" in data  # ar header mtime


@pytest.mark.oracle
@pytest.mark.parametrize("sde", [None, "1700000000"])
def test_an_edited_file_gets_another_time(cli, make_app, tmp_path: Path, sde: str | None) -> None:
    """Wrong result 1 of issue 27: Qt's QML disk cache is keyed on a file's path and
    time, so an edited file must change its time in the package, while the same
    tree still gives the same bytes.  Small files and files past the 1 MiB read
    chunk (whose header is written after their data), with or without
    SOURCE_DATE_EPOCH; an edit that keeps the size and the file system's time."""
    big = bytes(range(256)) * 8192 + b"var x = 1;\n"  # 2 MiB and a bit
    app = make_app(files={"qml/Page.qml": "Item { width: 10 }\n", "js/big.js": big,
                          "qml/Other.qml": "Item {}\n"})
    env = {"SOURCE_DATE_EPOCH": sde} if sde else {
        k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
    stamp = int(sde) if sde else 315_532_800  # 1980-01-01, the fallback
    before = build(cli, app, tmp_path / "before", env=env)
    old_times = _file_times(before)
    for name, path in (("./qml/Page.qml", "qml/Page.qml"), ("./js/big.js", "js/big.js")):
        assert old_times[name] == _content_time(stamp, (app / path).read_bytes())
    for path, old, new in (("qml/Page.qml", b"10", b"20"), ("js/big.js", b"x = 1", b"x = 2")):
        st = (app / path).stat()
        (app / path).write_bytes((app / path).read_bytes().replace(old, new))
        os.utime(app / path, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size, same time
    after = build(cli, app, tmp_path / "after", env=env)
    new_times = _file_times(after)
    assert new_times["./qml/Page.qml"] != old_times["./qml/Page.qml"]
    assert new_times["./js/big.js"] != old_times["./js/big.js"]
    assert new_times["./qml/Other.qml"] == old_times["./qml/Other.qml"]  # untouched: same
    assert new_times["./qml"] == old_times["./qml"] == stamp
    assert all(stamp - (1 << 24) < t <= stamp for t in new_times.values())
    again = build(cli, app, tmp_path / "again", env=env)  # the same tree: the same bytes
    assert again.read_bytes() == after.read_bytes()
    data = subprocess.run(["ar", "p", str(after), "data.tar.gz"], check=True,
                          capture_output=True).stdout
    subprocess.run(["gzip", "-t"], input=data, check=True)  # the patched header's CRC holds
    extracted = tmp_path / "x"
    run(["dpkg-deb", "-x", str(after), str(extracted)])
    assert (extracted / "js/big.js").read_bytes() == (app / "js/big.js").read_bytes()
    assert int((extracted / "js/big.js").stat().st_mtime) == new_times["./js/big.js"]
    cli("verify", "--force-missing-framework", "--allow-unauthenticated", after)


@pytest.mark.oracle
def test_sde_keeps_file_times_before_1970(cli, make_app, tmp_path: Path) -> None:
    """Older file times are kept under SOURCE_DATE_EPOCH, also those before 1970 (a tree
    restored from an archive with zero or bogus dates): written as tarfile and GNU tar
    write them (negative base-256), not a build error about a tar header field."""
    app = make_app(files={"old.txt": "old\n"})
    os.utime(app / "old.txt", (-86_400, -86_400))
    click = build(cli, app, tmp_path / "out", env={"SOURCE_DATE_EPOCH": "1600000000"})
    listing = run([need("dpkg-deb"), "-c", str(click)], env=UTC).stdout
    assert "1969-12-31 00:00 ./old.txt" in listing
    assert "1969-12-31 00:00 ./old.txt" in cli("contents", click, env=UTC).stdout


def test_pinned_bytes(cli, tmp_path: Path) -> None:
    """A fixed tree under a fixed SOURCE_DATE_EPOCH gives these exact bytes, everywhere."""
    app = write_tree(tmp_path / "app", {
        "manifest.json": json.dumps(BASE_MANIFEST),
        "hello.desktop": "[Desktop Entry]\n", "hello.apparmor": "{}\n", "bin/run": "#!/bin/sh\n",
    })
    (app / "bin/run").chmod(0o755)
    click = build(cli, app, tmp_path / "out", "--no-validate",  # the desktop file is a stub
                  env={"SOURCE_DATE_EPOCH": "1700000000"})
    digest = hashlib.sha256(click.read_bytes()).hexdigest()
    assert digest == PINNED_SHA256, digest


# deflate output is stable across zlib 1.2.x/1.3.x; zlib-ng builds of Python would differ.
PINNED_SHA256 = "bb524fd3aaf5b498801ad399c14efb29e7b3a0674b4b4000579589c36c2acabb"


def test_modes_normalised(cli, make_app, tmp_path: Path) -> None:
    app = make_app(files={"private": "x", "script": "x", "wide": "x", "d/f": "x"})
    (app / "private").chmod(0o600)
    (app / "script").chmod(0o700)
    (app / "wide").chmod(0o666)
    (app / "d").chmod(0o700)
    listing = cli("contents", build(cli, app, tmp_path / "out")).stdout
    lines = {line.split()[-1]: line.split()[0] for line in listing.splitlines()}
    assert lines["./private"] == "-rw-r--r--"
    assert lines["./script"] == "-rwxr-xr-x"
    assert lines["./wide"] == "-rw-r--r--"
    assert lines["./d/"] == "drwxr-xr-x"


@pytest.mark.parametrize("bits", [stat.S_ISUID | 0o755, stat.S_ISGID | 0o755])
def test_setuid_refused(cli, make_app, tmp_path: Path, bits: int) -> None:
    app = make_app(files={"bin/su": "x"})
    os.chmod(app / "bin/su", bits)
    out = tmp_path / "out"
    out.mkdir()
    assert_clean_error(cli("build", app, "-o", out, check=False), "bin/su", "chmod")
    assert not list(out.iterdir())


def test_sticky_dir_refused(cli, make_app, tmp_path: Path) -> None:
    app = make_app(files={"tmp/x": "x"})
    os.chmod(app / "tmp", 0o1777)
    assert_clean_error(cli("build", app, "-o", tmp_path, check=False), "sticky")


def test_setgid_dirs_of_a_shared_group_folder_pack(cli, make_app, tmp_path: Path) -> None:
    """A checkout in a setgid folder (a shared group folder) has the bit on every folder,
    inherited: the machine's state, never packed (folders are 0755), so the package is
    the same bytes as from a plain checkout, not a refusal."""
    plain = make_app("plain", files={"qml/pages/a.qml": "x\n"})
    shared = make_app("shared", files={"qml/pages/a.qml": "x\n"})
    for folder in (shared / "qml", shared / "qml/pages"):
        folder.chmod(0o2775)
    env = {"SOURCE_DATE_EPOCH": "1700000000"}
    assert (build(cli, shared, tmp_path / "one", env=env).read_bytes()
            == build(cli, plain, tmp_path / "two", env=env).read_bytes())


def test_ignores(cli, make_app, tmp_path: Path) -> None:
    app = make_app(files={
        ".git/config": "x", "sub/.svn/x": "x", "notes.txt~": "x", ".main.qml.swp": "x",
        "old.click": "x", "debug.log": "x", "build/tmp/x": "x", "build/keep": "x",
        ".htaccess": "keep dotfiles", "sub/.hidden": "x",
    })
    listing = cli("contents", build(cli, app, tmp_path / "out", "-I", "*.log", "-I", "build/tmp")).stdout
    for gone in (".git", ".svn", "notes.txt~", ".swp", "old.click", "debug.log", "build/tmp",
                 "manifest.json"):
        assert gone not in listing
    for kept in ("./.htaccess", "./sub/.hidden", "./build/keep"):
        assert kept in listing


def _member_paths(listing: str) -> set[str]:
    return {line.split(" ./", 1)[1].split(" -> ")[0] for line in listing.splitlines()
            if " ./" in line}


@pytest.mark.oracle
def test_default_ignores_are_the_originals(cli, make_app, tmp_path: Path,
                                           original_click: str) -> None:
    """docs/building.md: the version-control and editor leftovers left out are exactly the
    original's list, at any depth, and names that only look like them are kept."""
    ignored = [".git/HEAD", ".bzr/x", ".bzr-builddeb/x", ".bzr.backup/x", ".bzr.tags",
               ".bzrignore", ".cvsignore", ".gitattributes", ".gitignore", ".gitmodules",
               ".hg/x", ".hgignore", ".hgsigs", ".hgtags", ".shelf/x", ".svn/x", "CVS/x",
               "DEADJOE", "RCS/x", "_MTN/x", "_darcs/x", "{arch}/x", ".arch-ids/x",
               ".arch-inventory", "notes~", ".main.qml.swp", ".x.swo", "old.click",
               ",,tmp", ".#main.qml", ".~lock"]
    lookalikes = [".gitkeep", "a.swp", ".x.swpx", "cvs/x", "notes~old", ",x", "arch/x",
                  "DEADJOE.txt", "x.click.txt", ".htaccess", "hash#"]
    files: dict[str, str | bytes] = {}
    for name in ignored + lookalikes:
        files[name] = files["sub/" + name] = "x\n"
    app = make_app(files=files)
    ours = build(cli, app, tmp_path / "ours", "--review", "off")
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    run([original_click, "build", "--no-validate", str(app)], cwd=theirs)
    (original,) = theirs.glob("*.click")
    paths = _member_paths(cli("contents", ours).stdout)
    assert paths == _member_paths(run([original_click, "contents", str(original)]).stdout)
    for name in lookalikes:
        assert name in paths and "sub/" + name in paths, name


def test_symlinks_kept_even_dangling(cli, make_app, tmp_path: Path) -> None:
    app = make_app(files={"dangling": "-> nowhere", "abs": "-> /usr/share/icons", "dir": "-> sub",
                          "sub/x": "x"})
    # --no-validate: the review rejects the absolute link, this test is about how it is kept
    listing = cli("contents", build(cli, app, tmp_path / "out", "--no-validate")).stdout
    assert "./dangling -> nowhere" in listing and "./abs -> /usr/share/icons" in listing
    assert "./dir -> sub" in listing


def test_symlink_loop_refused(cli, make_app, tmp_path: Path) -> None:
    app = make_app(files={"a": "-> b", "b": "-> a"})
    assert_clean_error(cli("build", app, "-o", tmp_path, check=False), "symbolic link loop")
    assert not list(tmp_path.glob("*.click"))


def test_manifest_elsewhere_is_not_deleted(cli, make_app, tmp_path: Path) -> None:
    app = make_app()
    other = tmp_path / "other.json"
    other.write_text(json.dumps(dict(BASE_MANIFEST, version="9.9")))
    click = build(cli, app, tmp_path / "out", "-m", str(other))
    assert other.exists() and (app / "manifest.json").exists()
    assert click.name == "com.example.hello_9.9_all.click"
    assert "manifest.json" not in cli("contents", click).stdout
    # a directory given to -m means DIR/manifest.json, relative to DIRECTORY first
    (app / "meta").mkdir()
    (app / "meta/manifest.json").write_text(json.dumps(dict(BASE_MANIFEST, version="3.0")))
    click = build(cli, app, tmp_path / "out2", "-m", "meta")
    assert click.name.endswith("_3.0_all.click")
    assert "./meta/manifest.json" not in cli("contents", click).stdout


def test_installed_size(cli, make_app, tmp_path: Path) -> None:
    app = make_app(files={"big": b"\0" * 100_000})
    click = build(cli, app, tmp_path / "out")
    info = json.loads(cli("info", click).stdout)
    size = int(info["installed-size"])
    assert isinstance(info["installed-size"], str)
    # As the original's du --apparent-size: every file (manifest.json included) and 4 KiB for
    # each of the tree's folder, data/, DEBIAN/ and the build folder (test_installed_size.py
    # compares with the original itself)
    files = sum(p.stat().st_size for p in app.iterdir())
    assert size == -(-(files + 3 * 4096) // 1024)
    assert f"Installed-Size: {size}\n" in run(["dpkg-deb", "-f", str(click)]).stdout


@pytest.mark.parametrize(("manifest", "fragment"), [
    ("{", "invalid JSON at line 1"),
    (json.dumps(dict(BASE_MANIFEST, name="Bad_Name")), "name: 'Bad_Name' is not a valid package name"),
    (json.dumps(dict(BASE_MANIFEST, version="one")), "version: 'one' is not a valid Debian version"),
    (json.dumps(dict(BASE_MANIFEST, framework="a | b")), "framework: alternatives"),
    (json.dumps(dict(BASE_MANIFEST, maintainer="nobody")), "maintainer:"),
    (json.dumps(dict(BASE_MANIFEST, title="")), "title: must be a non-empty string"),
    (json.dumps(dict(BASE_MANIFEST, architecture=5)), "architecture:"),
    (json.dumps(dict(BASE_MANIFEST, hooks={"a": {"desktop": "../../etc"}})), "hooks.a.desktop"),
])
def test_bad_manifest_clean_error(cli, make_app, tmp_path: Path, manifest: str, fragment: str) -> None:
    app = make_app(manifest=manifest)
    out = tmp_path / "out"
    out.mkdir()
    assert_clean_error(cli("build", app, "-o", out, check=False), fragment)
    assert not list(out.iterdir())


def test_every_problem_reported(cli, make_app, tmp_path: Path) -> None:
    app = make_app(manifest=json.dumps({"name": "X", "version": "x"}))
    result = cli("build", app, "-o", tmp_path, check=False)
    assert_clean_error(result, "name:", "version:", "framework:", "maintainer:", "title:")
    (line,) = result.stderr.strip().splitlines()  # one line, every problem on it
    assert line.startswith(f"click-build: error: {app}/manifest.json: name: ")
    assert [part.split(":")[0] for part in line.split("; ")[1:]] == [
        "version", "framework", "maintainer", "title"]


def test_a_number_json_cannot_write_back_is_refused(cli, make_app, tmp_path: Path) -> None:
    app = make_app()
    text = (app / "manifest.json").read_text()
    (app / "manifest.json").write_text(text.replace("{", '{"x-big": 1e400, ', 1))
    result = cli("build", app, "-o", tmp_path, check=False)
    assert_clean_error(result, "manifest.json: invalid JSON: the number 1e400 is too large")
    assert not list(tmp_path.glob("*.click"))


def test_missing_manifest_and_directory(cli, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert_clean_error(cli("build", tmp_path / "empty", check=False), "does not contain manifest")
    assert_clean_error(cli("build", tmp_path / "nope", check=False), "does not exist")
    assert_clean_error(cli("build", check=False), "DIRECTORY")
    assert_clean_error(cli("build", tmp_path, "--bogus", check=False), "--bogus")


def test_clickable_layout_and_a_file_as_output_are_named(cli, make_app, tmp_path: Path) -> None:
    """A clickable project's manifest.json.in is pointed to; -o naming a file, or a link to
    a missing folder, says so."""
    app = make_app()
    (app / "manifest.json").rename(app / "manifest.json.in")
    assert_clean_error(cli("build", app, check=False),
                       "found manifest.json.in, as clickable projects have: build with "
                       "-m manifest.json.in")
    taken = tmp_path / "taken"
    taken.write_text("")
    for command in ("build", "buildsource"):
        result = cli(command, "-m", "manifest.json.in", "-o", taken, app, check=False)
        assert_clean_error(result, f"-o {taken}: not a folder; give the folder to write the "
                                   "package into")
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    for command in ("build", "buildsource"):
        result = cli(command, "-m", "manifest.json.in", "-o", dangling, app, check=False)
        assert_clean_error(result, f"-o {dangling}: a symbolic link to {tmp_path / 'nowhere'}, "
                                   "which does not exist; make that folder, or give another")
    assert not (tmp_path / "nowhere").exists()
    out = tmp_path / "out"
    cli("build", "-m", "manifest.json.in", "-o", out, app)
    assert len(list(out.glob("*.click"))) == 1


def test_bad_source_date_epoch(cli, make_app, tmp_path: Path) -> None:
    assert_clean_error(cli("build", make_app(), "-o", tmp_path, env={"SOURCE_DATE_EPOCH": "yesterday"},
                           check=False), "SOURCE_DATE_EPOCH")


def _world_accessible_app(tmp_path: Path, make_app) -> tuple[Path, Path]:
    tmp_path.chmod(0o755)
    app = make_app()
    for path in [app, *app.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    out = tmp_path / "out"
    out.mkdir(mode=0o755)
    return app, out


def test_unreadable_file(make_app, tmp_path: Path) -> None:
    app, out = _world_accessible_app(tmp_path, make_app)
    (app / "secret").write_text("x")
    (app / "secret").chmod(0)
    result = run(without_dac([*CLICK_BUILD, "build", str(app), "-o", str(out)]), check=False)
    assert_clean_error(result, "secret", "not readable")
    assert not list(out.iterdir())


def test_output_dir_not_writable(make_app, tmp_path: Path) -> None:
    app, out = _world_accessible_app(tmp_path, make_app)
    out.chmod(0o555)
    result = run(without_dac([*CLICK_BUILD, "build", str(app), "-o", str(out)]), check=False)
    assert_clean_error(result, "not writable")
    assert not list(out.iterdir())


def test_special_file_refused(cli, make_app, tmp_path: Path) -> None:
    app = make_app()
    os.mkfifo(app / "pipe")
    assert_clean_error(cli("build", app, "-o", tmp_path, check=False), "pipe", "fifo")


@pytest.mark.slow
def test_large_file_bounded_memory(make_app, tmp_path: Path) -> None:
    """A 1 GiB file goes through in bounded memory (the file is sparse: quick to read)."""
    app = make_app()
    with open(app / "huge.img", "wb") as f:
        f.truncate(1 << 30)
    out = tmp_path / "out"
    out.mkdir()
    probe = (
        "import resource, subprocess, sys;"
        f"subprocess.run({[*CLICK_BUILD, 'build', str(app), '-o', str(out)]!r}, check=True,"
        " stdout=subprocess.DEVNULL);"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    peak_kib = int(run([sys.executable, "-c", probe]).stdout)
    assert peak_kib < 64 * 1024, f"peak RSS {peak_kib} KiB"
    (click,) = out.glob("*.click")
    subprocess.run(["dpkg-deb", "--fsys-tarfile", str(click)], check=True, stdout=subprocess.DEVNULL)


@pytest.mark.oracle
def test_buildsource_like_the_original(cli, make_app, tmp_path: Path) -> None:
    import tarfile

    app = make_app(files={"README": "src", ".git/HEAD": "x", ".normal/x": "y", "obj.o": "o",
                          "lib.so": "so"})
    out = tmp_path / "out"
    out.mkdir()
    result = cli("buildsource", app, "-o", out)
    assert "Successfully built source package in" in result.stdout
    (src,) = out.glob("*.tar.gz")
    assert src.name == "com.example.hello_1.0.tar.gz"
    with tarfile.open(src) as tar:
        names = tar.getnames()
        assert all(m.uname == "root" and m.uid == 0 for m in tar.getmembers())
    assert "./manifest.json" in names and "./README" in names and "./.normal/x" in names
    assert not any(n.endswith((".o", ".so")) or ".git" in n for n in names)
    again = tmp_path / "again"
    again.mkdir()
    cli("buildsource", app, "-o", again)
    assert (again / src.name).read_bytes() == src.read_bytes()


@pytest.mark.oracle
def test_compression_level(cli, make_app, tmp_path: Path, original_click: str) -> None:
    """-z N as dpkg-deb's: 0 stores, 9 (the default) is smallest; every level gives a
    package the original and dpkg-deb read, the same bytes on every rebuild."""
    text = "".join(f"    property int item{i % 97}: model{i % 89}.count + {i}\n"
                   for i in range(20_000))
    app = make_app(files={"qml/Main.qml": text})
    default = build(cli, app, tmp_path / "default")
    sizes = {}
    for level in ("0", "1", "9"):
        click = build(cli, app, tmp_path / f"z{level}", "-z", level)
        assert click.name == default.name
        sizes[level] = data_member_size(click)
        run([original_click, "verify", "--force-missing-framework", "--allow-unauthenticated",
             str(click)])
        extracted = tmp_path / f"x{level}"
        run(["dpkg-deb", "-x", str(click), str(extracted)])
        assert (extracted / "qml/Main.qml").read_text() == text
        again = build(cli, app, tmp_path / f"again{level}", "--compression-level", level)
        assert again.read_bytes() == click.read_bytes()
    assert (tmp_path / "z9" / default.name).read_bytes() == default.read_bytes()
    assert sizes["0"] > len(text) > sizes["1"] > sizes["9"]
    for bad in ("10", "x", "-1", "9.0"):
        result = cli("build", "-z", bad, app, "-o", tmp_path, check=False)
        assert_clean_error(result, "compression level")
        assert result.returncode == 2
    assert not list(tmp_path.glob("*.click"))


def test_buildsource_compression_level(cli, make_app, tmp_path: Path) -> None:
    import tarfile

    app = make_app(files={"qml/Main.qml": "Item { width: 10 }\n" * 5000})
    sources = {}
    for level in ("1", "9"):
        out = tmp_path / level
        out.mkdir()
        cli("buildsource", "-z", level, app, "-o", out)
        (sources[level],) = out.glob("*.tar.gz")
        with tarfile.open(sources[level]) as tar:
            assert tar.extractfile("./qml/Main.qml").read() == b"Item { width: 10 }\n" * 5000
    assert sources["9"].stat().st_size < sources["1"].stat().st_size


def test_build_click_level_checked(make_app, tmp_path: Path) -> None:
    from click_build.build import build_click, stage_tree
    from click_build.errors import BuildError
    from click_build.manifest import load_manifest

    app = make_app()
    manifest = load_manifest(app / "manifest.json")
    for bad in (10, -1, True, 9.0):
        with pytest.raises(BuildError, match="compression level"):
            build_click(manifest, stage_tree(app), tmp_path, level=bad)  # type: ignore[arg-type]
    assert not list(tmp_path.glob("*.click"))


@pytest.mark.oracle
def test_size_close_to_dpkg_deb(cli, make_app, tmp_path: Path) -> None:
    """Level 9 on all cores: data.tar.gz within 0.5% of dpkg-deb -Zgzip's on source text
    big enough for many parallel blocks, and random data stored, not grown."""
    import random

    rng = random.Random(15)
    words = [f"{rng.choice(['item', 'list', 'view', 'page'])}{rng.randint(0, 999)}"
             for _ in range(1500)]
    files: dict[str, str | bytes] = {
        f"qml/Page{i}.qml": "".join(
            f"    property int {rng.choice(words)}: {rng.choice(words)}.count + {rng.randint(0, 99)}\n"
            for _ in range(2000)) for i in range(20)}
    files["media/clip.ogg"] = rng.randbytes(300_000)
    files["DEBIAN/control"] = ("Package: bench\nVersion: 1.0\nArchitecture: all\n"
                               "Maintainer: A <a@b.c>\nDescription: d\n")
    app = make_app(files=files)
    ours = build(cli, app, tmp_path / "ours", "-I", "DEBIAN", "--no-validate")
    deb = tmp_path / "x.deb"
    run(["dpkg-deb", "-Zgzip", "-b", str(app), str(deb)])
    ratio = data_member_size(ours) / data_member_size(deb)
    assert 0.99 < ratio < 1.005, ratio


def test_content_time_rule() -> None:
    """docs/building.md: up to 2**24 s before the timestamp, never before 1970; the
    md5's first 8 bytes decide."""
    from click_build.timestamps import content_time

    digest = hashlib.md5(b"x").digest()
    assert content_time(1_700_000_000, digest) == _content_time(1_700_000_000, b"x")
    for stamp in (0, 1, 1000, (1 << 24) - 1):
        times = {content_time(stamp, hashlib.md5(bytes([i])).digest()) for i in range(200)}
        assert all(0 <= t <= stamp for t in times)
        assert len(times) > 1 or stamp < 2
