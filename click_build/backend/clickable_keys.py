"""What each key of Clickable's project config becomes (:mod:`.clickable_config` reads
the file; this module holds the key-by-key rules, the table of docs/clickable.md).

Clickable's lists may be written as one string: ``build_args``, ``make_args``,
``install_*``, ``ignore`` and ``dependencies_*`` are then split at spaces, ``prebuild``,
``build`` and ``postbuild`` are one command.  Its placeholders (``${ROOT}``,
``${ARCH_TRIPLET}``, the older ``$ARCH_TRIPLET``) keep working: steps run in a shell
that has them as environment variables, and click-build replaces them in arguments.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError
from ..manifest import FRAMEWORK_RE
from .libraries import variable_name

__all__ = ["Converter", "Note", "order", "reason", "type_name"]


@dataclass(frozen=True)
class Note:
    key: str  # the Clickable key, "libraries.NAME.KEY" for a library's
    shown: str  # its value as written, shortened
    result: str  # the setting it became, or why it was left out

#: Clickable's builders -> (kind, architecture it forces).
BUILDERS: dict[str, tuple[str, str | None]] = {
    "pure": ("qml", None), "pure-qml-qmake": ("qmake", "all"), "qmake": ("qmake", None),
    "pure-qml-cmake": ("cmake", "all"), "cmake": ("cmake", None), "custom": ("custom", None),
    "precompiled": ("precompiled", None), "python": ("precompiled", None),
}
#: Builders click-build has no kind for.
NO_KIND = {"go": "Go", "rust": "Rust (cargo)", "cordova": "Cordova", "qbs": "Qbs"}
#: Clickable's qt_version -> the framework it chooses (its default_qt_framework_mapping).
QT_FRAMEWORKS = {"5.9": "ubuntu-sdk-16.04", "5.12": "ubuntu-sdk-20.04",
                 "5.15": "ubuntu-touch-24.04-1.x"}
ARCHITECTURES = ("all", "armhf", "arm64", "amd64")
#: What Clickable's pure builder leaves out besides the VCS files.
PURE_IGNORES = ["build", ".gitlab-ci.yml"]
#: Clickable's placeholders, which the shell and click-build know as variables.
PLACEHOLDERS = ("SDK_FRAMEWORK", "CLICK_FRAMEWORK", "CLICK_FRAMEWORK_BASE", "QT_VERSION",
                "ARCH", "ARCH_TRIPLET", "NUM_PROCS", "ROOT", "BUILD_DIR", "SRC_DIR",
                "INSTALL_DIR", "CLICK_LD_LIBRARY_PATH", "CLICK_QML2_IMPORT_PATH",
                "CLICK_PATH", "NAME")

_HOST = "copies the build machine's {}; click-build packs what the project builds (copy "
_HOST_END = "them in postbuild if this machine's are the phone's)"
_REASONS = {
    "clickable_minimum_required": "the Clickable release the file needs; click-build needs "
                                  "none",
    "kill": "the process clickable launch stops; no click-build command uses it",
    "launch": "how clickable launch starts the app; click-build run starts it from its "
              "desktop file",
    "scripts": "commands for clickable script; run them yourself (or as prebuild steps)",
    "default": "the commands clickable runs without arguments",
    "always_clean": "click-build's builds are incremental where the tools are; delete "
                    "build/ for a clean one",
    "test": "the command clickable test runs",
    "make_jobs": "make and CMake run one job per processor",
    "postmake": "click-build has no step between make and make install; move the commands "
                "to postbuild, which runs after the install",
    "dependencies_host": "tools Clickable installs into its container; install them on "
                         "this machine",
    "dependencies_target": "the phone's libraries Clickable installs for the build; install "
                           "them on this machine (apt install NAME:ARCH) or build against a "
                           "sysroot (docs/phone.md)",
    "dependencies_ppa": "archives for Clickable's container; click-build builds with this "
                        "machine's packages",
    "dependencies": "an older name of dependencies_target",
    "dependencies_build": "an older name of dependencies_host",
    "specificDependencies": "an older Clickable key",
    "image_setup": "how Clickable sets up its container; click-build builds on this machine",
    "docker_image": "Clickable's container; click-build builds on this machine",
    "gopath": "Go builds, which click-build does not make",
    "cargo_home": "Rust builds, which click-build does not make",
    "rustup_home": "Rust builds, which click-build does not make",
    "rust_channel": "Rust builds, which click-build does not make",
    "root_dir": "click-build builds the folder of pyproject.toml",
    "build_dir": "click-build's build folder is build/click-<arch> (the build-dir setting)",
    "install_dir": "click-build stages in its build folder ($INSTALL_DIR names it)",
    "build_home": "click-build's steps run with your HOME",
    "templates": "YAML anchors for the file itself, applied where it uses them",
    "is_app": "a library-only project; click-build builds apps",
    "restrict_arch_env": "set by Clickable's environment, not the file",
    **{k: "a key Clickable no longer reads" for k in (
        "premake", "dir", "lxd", "chroot", "sdk", "package", "app", "ssh", "dirty")},
}
_PRIORITY = {"builder": 0, "template": 0, "framework": 1, "qt_version": 2, "libraries": 3}
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_LIBRARY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*\Z")
_PATH_OK = re.compile(r"[A-Za-z0-9_./*?${}@+,=:-]+\Z")
_JOBS = re.compile(r"-j\d*\Z|--jobs(=\d+)?\Z")


def order(name: str) -> int:
    """Keys others depend on first (the builder decides what build_args are)."""
    return _PRIORITY.get(name, 9)


def reason(name: str) -> str:
    return _REASONS.get(name, "not a key of Clickable's project config")


def type_name(value: object) -> str:
    return {str: "a string", bool: "a boolean", int: "a number", float: "a number",
            list: "a list", dict: "a mapping", type(None): "empty"}.get(
        type(value), type(value).__name__)


def shown(value: object, limit: int = 40) -> str:
    """``value`` as short JSON text, invisible characters escaped.  It stops writing at
    ``limit`` characters: a YAML alias bomb (lists of aliased lists) expands to more text
    than any machine holds, and is never walked further than that."""
    out: list[str] = []
    budget = [limit + 1]

    def put(text: str) -> bool:
        out.append(text[:budget[0]])
        budget[0] -= len(text)
        return budget[0] > 0

    def walk(v: object) -> bool:
        if isinstance(v, (list, tuple)):
            if not put("["):
                return False
            for i, item in enumerate(v):
                if (i and not put(", ")) or not walk(item):
                    return False
            return put("]")
        if isinstance(v, dict):
            if not put("{"):
                return False
            for i, (k, item) in enumerate(v.items()):
                if (i and not put(", ")) or not walk(k) or not put(": ") or not walk(item):
                    return False
            return put("}")
        if isinstance(v, (str, int, float, bool)) or v is None:
            return put(json.dumps(v, ensure_ascii=True))
        return put(json.dumps(str(v), ensure_ascii=True))

    walk(value)
    text = "".join(out)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def braced(text: str) -> str:
    """Clickable's older ``$ARCH_TRIPLET`` as ``${ARCH_TRIPLET}``, the form click-build
    replaces in arguments."""
    return re.sub(r"\$(" + "|".join(PLACEHOLDERS) + r"|[A-Z0-9_]+_LIB_[A-Z]+_DIR)\b(?!\})",
                  r"${\1}", text)


class Converter:
    """Fills an :class:`Imported` key by key (one method per kind of key)."""

    def __init__(self, data: dict[str, object], project: Path, label: str,
                 table: dict[str, object], carried: list[Note], left_out: list[Note]) -> None:
        self.data, self.project, self.label = data, project, label
        self.table, self.carried, self.left_out = table, carried, left_out
        self.kind = ""
        self.forced_arch: str | None = None
        self.pure = False
        self.installs: list[str] = []
        self.postbuild: list[str] = []
        self.library_names: set[str] = set()

    # -- bookkeeping ----------------------------------------------------------------
    def took(self, key: str, value: object, result: str) -> None:
        self.carried.append(Note(key, shown(value), result))

    def left(self, key: str, value: object, why: str) -> None:
        self.left_out.append(Note(key, shown(value), why))

    def _sub(self, name: str) -> dict[str, object]:
        sub = self.table.setdefault(name, {})
        assert isinstance(sub, dict)
        return sub

    def _text(self, key: str, value: object) -> str:
        if not isinstance(value, str):
            raise ConfigError(f"{self.label}: {key}: must be a string, not {type_name(value)}")
        return self._clean(key, value)

    def _clean(self, key: str, text: str) -> str:
        if "\0" in text:
            raise ConfigError(f"{self.label}: {key}: holds a NUL character")
        if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
            raise ConfigError(f"{self.label}: {key}: holds a lone surrogate (an escape such "
                              "as \\ud800 that is no character)")
        return text

    def _list(self, key: str, value: object, split: bool) -> list[str]:
        """A string or a list of strings; a string is split at spaces (``split``) or is
        one item, as Clickable has them."""
        if isinstance(value, str):
            return self._clean(key, value).split() if split else [self._clean(key, value)]
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return [self._clean(key, v) for v in value]
        raise ConfigError(f"{self.label}: {key}: must be a string or a list of strings, not "
                          f"{type_name(value)}")

    def _relative(self, text: str) -> str | None:
        """A path of the project, relative to it, or None for one outside."""
        rel = re.sub(r"^\$\{?ROOT\}?/?", "", text).strip("/") if text.startswith("$") \
            else text
        if rel.startswith("/") or "$" in rel or any(p == ".." for p in rel.split("/")):
            return None
        return rel or "."

    # -- the builder and the target ---------------------------------------------------
    def start(self) -> None:
        if "builder" not in self.data and "template" not in self.data:
            self.left("builder", None, "not set: click-build's kind = \"auto\" picks it from "
                      "the files (CMakeLists.txt, *.pro, ...)")

    def builder(self, key: str, value: object) -> None:
        name = self._text(key, value)
        if key == "template" and "builder" in self.data:
            self.left(key, value, "an older name of builder, which is set")
            return
        if name in NO_KIND:
            raise ConfigError(f"{self.label}: {key}: click-build has no kind for {NO_KIND[name]} "
                              "projects; build them with kind = \"custom\" and build = [...] "
                              "commands that install into $INSTALL_DIR")
        if name not in BUILDERS:
            raise ConfigError(f"{self.label}: {key}: {name!r} is not one of Clickable's "
                              f"builders ({', '.join(sorted([*BUILDERS, *NO_KIND]))})")
        kind, arch = BUILDERS[name]
        self.pure = name in ("pure", "precompiled", "python")
        if name == "pure" and ((self.project / "index.html").is_file()
                               or (self.project / "www").is_dir()):
            kind = "html5"
        self.kind = kind
        self.table["kind"] = kind
        result = f'kind = "{kind}"'
        if arch:
            self.forced_arch = arch
            self.table["architecture"] = arch
            result += f', architecture = "{arch}"'
        self.took(key, value, result + (" (template: the older name of builder)"
                                        if key == "template" else ""))

    def framework(self, key: str, value: object) -> None:
        name = self._text(key, value)
        if not re.match(FRAMEWORK_RE, name):
            self.left(key, value, "not a framework name")
            return
        self.table["framework"] = name
        self.took(key, value, f'framework = "{name}"')

    def qt_version(self, key: str, value: object) -> None:
        text = str(value) if isinstance(value, (int, float)) and not isinstance(
            value, bool) else self._text(key, value)
        if "framework" in self.table:
            self.left(key, value, "the framework is set")
        elif text in QT_FRAMEWORKS:
            self.table["framework"] = QT_FRAMEWORKS[text]
            self.took(key, value, f'framework = "{QT_FRAMEWORKS[text]}" (its Qt)')
        else:
            self.left(key, value, f"no framework has Qt {text} ({', '.join(QT_FRAMEWORKS)})")

    def architecture(self, key: str, value: object) -> None:
        arch = self._text(key, value)
        if arch not in ARCHITECTURES:
            self.left(key, value, "click-build builds for this machine unless an "
                      "architecture is named" if arch in ("host", "detect")
                      else f"not one of {', '.join(ARCHITECTURES)}")
        elif self.forced_arch and arch != self.forced_arch:
            self.left(key, value, f"the builder makes {self.forced_arch} packages")
        elif "architecture" in self.table and not self.forced_arch:
            self.left(key, value, "the architecture is set")
        else:
            self.table["architecture"] = arch
            self.took(key, value, f'architecture = "{arch}"')

    def review(self, key: str, value: object) -> None:
        if not isinstance(value, bool):
            raise ConfigError(f"{self.label}: {key}: must be true or false, not "
                              f"{type_name(value)}")
        if key == "ignore_review_warnings" or not value:
            self.left(key, value, "click-build's default: only review errors fail a build"
                      if key == "ignore_review_warnings" else "the default")
            return
        mode = "off" if key == "skip_review" else "report"
        if self.table.get("review") == "off":
            self.left(key, value, "review = \"off\" (skip_review) is set")
            return
        self.table["review"] = mode
        self.took(key, value, f'review = "{mode}"')

    # -- steps and their environment ---------------------------------------------------
    def steps(self, key: str, value: object) -> None:
        commands = self._list(key, value, split=False)
        if key == "build" and self.kind != "custom":
            self.left(key, value, "only the custom builder runs build commands")
            return
        if key == "postbuild":
            self.postbuild = commands  # after the install_* copies, as Clickable runs them
        else:
            self.table[key] = commands
        self.took(key, value, f"{key} = [{len(commands)} command{'s' * (len(commands) != 1)}]")

    def env_vars(self, key: str, value: object, into: dict[str, object] | None = None,
                 label: str = "env_vars") -> None:
        if not isinstance(value, dict):
            raise ConfigError(f"{self.label}: {label}: must be a mapping of names to values, "
                              f"not {type_name(value)}")
        env = {} if into is None else into
        for name, v in value.items():
            if not isinstance(name, str) or not _ENV_NAME.match(name):
                self.left(f"{label}.{name}", v, "not an environment variable name")
                continue
            if isinstance(v, bool) or not isinstance(v, (str, int, float)):
                raise ConfigError(f"{self.label}: {label}.{name}: must be a string (quote it), "
                                  f"not {type_name(v)}")
            env[name] = braced(self._clean(f"{label}.{name}", str(v)))
        if env and into is None:
            self.table["env"] = env
        if env:
            self.took(label, value, f"env ({len(env)} variable{'s' * (len(env) != 1)})")

    # -- arguments of the build tools ---------------------------------------------------
    def build_args(self, key: str, value: object) -> None:
        args = [braced(a) for a in self._list(key, value, split=True)]
        if self.kind == "cmake":
            cmake = self._sub("cmake")
            kept: list[str] = []
            for arg in args:
                if re.match(r"-D\s*CMAKE_INSTALL_PREFIX\b", arg):
                    self.left(key, arg, "click-build installs with DESTDIR and the prefix /.")
                elif m := re.match(r"-D\s*CMAKE_BUILD_TYPE(?::\w+)?=(.+)", arg):
                    cmake["build-type"] = m.group(1)
                    self.took(key, arg, f'cmake.build-type = "{m.group(1)}"')
                else:
                    kept.append(arg)
            if kept:
                cmake["args"] = kept
                self.took(key, kept, f"cmake.args ({len(kept)})")
        elif self.kind == "qmake":
            qmake = self._sub("qmake")
            config = [a.split("=", 1)[1] for a in args if a.startswith("CONFIG+=")]
            pro = [a for a in args if a.endswith(".pro")]
            other = [a for a in args if not a.startswith("CONFIG+=") and a not in pro]
            if config:
                qmake["config"] = config
                self.took(key, value, f"qmake.config = {json.dumps(config)}")
            for arg in pro:
                rel = self._relative(arg)
                if rel is None:
                    self.left(key, arg, "a project file outside the project")
                else:
                    qmake["project"] = rel
                    self.took(key, arg, f'qmake.project = "{rel}"')
            if other:
                qmake["args"] = other
                self.took(key, other, f"qmake.args ({len(other)})")
        else:
            self.left(key, value, f"the {self.kind or 'chosen'} builder does not use it")

    def make_args(self, key: str, value: object) -> None:
        args = [braced(a) for a in self._list(key, value, split=True)]
        if self.kind != "qmake":
            self.left(key, value, "CMake builds with its own generator (scikit-build-core): "
                      "make arguments do not apply" if self.kind == "cmake"
                      else f"the {self.kind or 'chosen'} builder does not run make")
            return
        for arg in [a for a in args if _JOBS.match(a)]:
            self.left(key, arg, "make runs one job per processor")
        kept = [a for a in args if not _JOBS.match(a)]
        if kept:
            self._sub("qmake")["make-args"] = kept
            self.took(key, kept, f"qmake.make-args ({len(kept)})")

    def src_dir(self, key: str, value: object) -> None:
        rel = self._relative(self._text(key, value))
        if self.kind == "qmake" and rel is not None:
            folder = self.project / rel
            found = sorted(p.name for p in folder.glob("*.pro")) if folder.is_dir() else []
            if len(found) == 1 and "project" not in self._sub("qmake"):
                project = found[0] if rel == "." else f"{rel}/{found[0]}"
                self._sub("qmake")["project"] = project
                self.took(key, value, f'qmake.project = "{project}"')
                return
        self.left(key, value, "click-build builds the project's top folder (for qmake, name "
                  "the .pro file in qmake.project)")

    def ignore(self, key: str, value: object) -> None:
        names = self._list(key, value, split=True)
        exclude = self.table.setdefault("exclude", [])
        assert isinstance(exclude, list)
        for name in names:
            if "/" in name:
                self.left(key, name, "Clickable matches file names, so a path matched nothing")
            elif name not in exclude:
                exclude.append(name)
        self.took(key, value, "exclude (file names left out at any depth)")

    # -- files copied into the package ----------------------------------------------------
    def _copy(self, key: str, source: str, dest: str) -> bool:
        rel = self._relative(source)
        if rel is None or not _PATH_OK.match(rel):
            self.left(key, source, "a file outside the project, or a name a shell would "
                      "read otherwise: copy it in postbuild yourself")
            return False
        target = re.sub(r"^\$\{?INSTALL_DIR\}?/?", "", dest).strip("/")
        if "$" in target or any(p == ".." for p in target.split("/")) or \
                not _PATH_OK.match(target or "."):
            self.left(key, dest, "a destination outside the package")
            return False
        where = f'"$INSTALL_DIR/{target}"' if target else '"$INSTALL_DIR"'
        mkdir = f"mkdir -p {where} && " if target else ""
        self.installs.append(f"{mkdir}cp -R -P -- {rel} {where}/")
        return True

    def install_root_data(self, key: str, value: object) -> None:
        for entry in self._list(key, value, split=True):
            if self._copy(key, entry, ""):
                self.took(key, entry, "postbuild: copied into the package's top")

    def install_data(self, key: str, value: object) -> None:
        if not isinstance(value, dict):
            raise ConfigError(f"{self.label}: {key}: must be a mapping of sources to "
                              f"destinations, not {type_name(value)}")
        for source, dest in value.items():
            if not isinstance(source, str) or not isinstance(dest, str):
                raise ConfigError(f"{self.label}: {key}: sources and destinations must be "
                                  "strings")
            if self._copy(key, self._clean(key, source), self._clean(key, dest)):
                self.took(key, {source: dest}, "postbuild: copied into the package")

    def install_from_host(self, key: str, value: object) -> None:
        what = {"install_lib": "libraries", "install_bin": "programs",
                "install_qml": "QML modules"}[key]
        for entry in self._list(key, value, split=True):
            m = re.match(r"\$\{?([A-Z0-9_]+)_LIB_INSTALL_DIR\}?/(?:usr/)?lib/", entry)
            lib = next((n for n in self.library_names
                        if m and variable_name(n) == m.group(1)), None)
            if key == "install_lib" and lib is not None:
                self.took(key, entry, f"packed with library {lib}'s shared libraries")
            else:
                self.left(key, entry, _HOST.format(what) + _HOST_END)

    # -- libraries ------------------------------------------------------------------------
    def libraries(self, key: str, value: object) -> None:
        if not isinstance(value, dict):
            raise ConfigError(f"{self.label}: libraries: must be a mapping of names to "
                              f"libraries, not {type_name(value)}")
        for name, lib in value.items():
            where = f"libraries.{name}"
            if not isinstance(name, str) or not _LIBRARY_NAME.match(name):
                self.left(where, lib, "a name click-build cannot give a folder (letters, "
                          "digits and _.+-)")
                continue
            if not isinstance(lib, dict):
                raise ConfigError(f"{self.label}: {where}: must be a mapping, not "
                                  f"{type_name(lib)}")
            builder = lib.get("builder")
            if builder not in ("cmake", "qmake", "custom"):
                self.left(where, builder, "click-build builds cmake, qmake and custom "
                          "libraries" if builder else "no builder")
                continue
            out: dict[str, object] = {"kind": builder}
            self.library_names.add(name)
            for k, v in lib.items():
                self._library_key(name, out, str(k), v)
            self._sub("libraries")[name] = out
            self.took(where, {"builder": builder}, f"libraries.{name} ({builder})")

    def _library_key(self, name: str, out: dict[str, object], k: str, v: object) -> None:
        where = f"libraries.{name}.{k}"
        if k == "builder":
            return
        if k == "src_dir":
            rel = self._relative(self._text(where, v).replace("${NAME}", name))
            if rel is None:
                self.left(where, v, "a folder outside the project")
            elif rel != f"libs/{name}":
                out["source-dir"] = rel
        elif k in ("build_args", "make_args"):
            args = [braced(a) for a in self._list(where, v, split=True)]
            drop = [a for a in args if re.match(r"-D\s*CMAKE_INSTALL_PREFIX\b", a)
                    or (k == "make_args" and _JOBS.match(a))]
            for arg in drop:
                self.left(where, arg, "click-build installs each library into its own "
                          "prefix, one job per processor")
            kept = [a for a in args if a not in drop]
            if kept:
                out["args" if k == "build_args" else "make-args"] = kept
        elif k == "env_vars":
            env: dict[str, object] = {}
            self.env_vars(k, v, into=env, label=where)
            if env:
                out["env"] = env
        elif k in ("prebuild", "build", "postbuild"):
            commands = self._list(where, v, split=False)
            if k == "build" and out.get("kind") != "custom":
                self.left(where, v, "only custom libraries run build commands")
            else:
                out[k] = commands
        else:
            self.left(where, v, _REASONS.get(k, "not a key of a Clickable library"))

    def finish(self) -> None:
        if self.pure:
            exclude = self.table.setdefault("exclude", [])
            assert isinstance(exclude, list)
            exclude.extend(p for p in PURE_IGNORES if p not in exclude)
        steps = [*self.installs, *self.postbuild]
        if steps:
            self.table["postbuild"] = steps
        order = ["kind", "architecture", "framework", "exclude", "review", "prebuild", "build",
                 "postbuild", "env", "cmake", "qmake", "libraries"]
        ordered = {k: self.table[k] for k in order if k in self.table and self.table[k] != {}}
        self.table.clear()
        self.table.update(ordered)
