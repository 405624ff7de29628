"""The layers hold: the core loads only the standard library, imports run one way.

docs/architecture.md draws the layers; these tests are where the drawing can fail.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

PACKAGE = ROOT / "click_build"
#: Integrations, the developer loop (run and device build projects through the backend)
#: and the command line: everything else in click_build is the core.
NOT_CORE = {"click_build.cli", "click_build.argparsing", "click_build.__main__", "click_build.new",
            "click_build.template_jinja"}
NOT_CORE_PACKAGES = ("click_build.backend", "click_build.commands", "click_build.cmake",
                     "click_build.templates", "click_build.run", "click_build.device")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _all_modules() -> list[str]:
    return sorted(_module_name(p) for p in PACKAGE.rglob("*.py")
                  if "templates" not in p.relative_to(PACKAGE).parts[:1])


def _is_core(name: str) -> bool:
    return (name.startswith("click_build") and name not in NOT_CORE
            and not name.startswith(NOT_CORE_PACKAGES))


CORE = [m for m in _all_modules() if _is_core(m)]

_PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
import importlib
importlib.import_module(sys.argv[2])
print(json.dumps(sorted(sys.modules)))
"""


def test_the_core_is_most_of_the_package() -> None:
    assert {"click_build.build", "click_build.finish", "click_build.elf",
            "click_build.framework_table", "click_build.placeholders", "click_build.review",
            "click_build.install.installer"} <= set(CORE)


@pytest.mark.parametrize("module", CORE)
def test_core_module_loads_only_the_standard_library_and_the_core(module: str) -> None:
    # -S: no site-packages at all, so nothing but the standard library and this checkout
    # can load; -E: no PYTHON* variables from the caller.
    result = subprocess.run([sys.executable, "-S", "-E", "-c", _PROBE, str(ROOT), module],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout)
    stdlib = set(sys.stdlib_module_names) | {"__main__", "_distutils_hack"}
    foreign = [name for name in loaded
               if name.split(".")[0] not in stdlib and not _is_core(name)]
    assert not foreign, f"{module} loads {foreign}"


def _exists(name: str) -> bool:
    base = ROOT / name.replace(".", "/")
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def _imports(path: Path, package: str) -> set[str]:
    """Every click_build module ``path`` imports, at any depth of its code: inside
    functions and under ``if TYPE_CHECKING:`` too.  ``from . import name`` counts as an
    import of the module ``name`` when there is one, else of the package."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = _module_name(path)
    base = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = base.split(".")
                anchor = ".".join(parts[: len(parts) - node.level + 1])
                target = f"{anchor}.{node.module}" if node.module else anchor
            else:
                target = node.module or ""
            for alias in node.names:
                name = f"{target}.{alias.name}"
                name = name if _exists(name) else target
                if name.startswith(package) and _exists(name):
                    found.add(name)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith(package))
    found.discard(here)
    return found


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def _graph(package: str = "click_build") -> dict[str, set[str]]:
    return {_module_name(p): _imports(p, package) for p in PACKAGE.rglob("*.py")
            if "templates" not in p.relative_to(PACKAGE).parts[:1]}


def test_the_package_has_no_import_circle() -> None:
    """Anywhere in click_build: imports inside functions and those only the type checker
    reads count too (a lazy import only hides a circle)."""
    found = _cycle(_graph())
    assert found is None, " -> ".join(found or [])


def test_the_circle_finder_finds_circles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycle(graph) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_lazy_and_type_only_imports_are_edges() -> None:
    module = PACKAGE / "review" / "lint.py"
    assert "click_build.review._collect" in _imports(module, "click_build")
    assert "click_build.errors" in _imports(PACKAGE / "review" / "__init__.py", "click_build")


def test_only_the_installer_and_its_users_import_the_installer() -> None:
    """The core's readers (frameworks, hook files, review) never load the installer: what
    they share with it is a core module (``pkgfile.read_regular``, ``hookfiles``)."""
    users = ("click_build.install", "click_build.commands", "click_build.run",
             "click_build.device")
    for name, imported in _graph().items():
        if name.startswith(users) or name in NOT_CORE:
            continue
        wrong = sorted(m for m in imported if m.startswith("click_build.install"))
        assert not wrong, f"{name} imports {wrong}"


def _installer_table() -> list[list[str]]:
    """The modules of architecture.md's installer table, row by row, top first."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## The installer\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1] for line in section.splitlines()
            if line.startswith("| `") and line.split("|")[1].strip().endswith(".py`")]
    return [[f"click_build.install.{name.strip(' `')[:-3]}" for name in row.split(",")]
            for row in rows]


def test_the_installers_modules_import_down_the_architecture_table() -> None:
    """Every module of install/ is in the table, and imports only those after it (a row
    of several is read left to right)."""
    order = [name for row in _installer_table() for name in row]
    graph = _graph()
    modules = sorted(m for m in graph if m.startswith("click_build.install."))
    assert sorted(order) == modules
    for i, name in enumerate(order):
        upward = sorted(m for m in graph[name] if m in order[:i + 1])
        assert not upward, f"{name} imports {upward}, above it in docs/architecture.md"


def test_the_core_never_imports_an_integration() -> None:
    for path in PACKAGE.rglob("*.py"):
        name = _module_name(path)
        if not _is_core(name) or "templates" in path.parts:
            continue
        wrong = {m for m in _imports(path, "click_build") if not _is_core(m)}
        assert not wrong, f"{name} imports {sorted(wrong)}"


def _third_party_imports(path: Path) -> set[str]:
    """Top-level names of every absolute import in ``path`` that is neither the standard
    library nor click_build, at any depth of its code (lazy imports included)."""
    stdlib = set(sys.stdlib_module_names)
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names)
    return {name for name in found if name not in stdlib and name != "click_build"}


def test_the_core_imports_nothing_outside_the_standard_library_but_zlib_ng() -> None:
    """Even lazily: the exceptions are zlib-ng, which click_build.deflate tries and does
    without (a faster level-9 deflate where pip installs it), and zstandard, which the
    sysroot's unpacker needs only for zstd packages (Ubuntu's) and asks for by name."""
    used = {}
    for path in PACKAGE.rglob("*.py"):
        name = _module_name(path)
        if _is_core(name) and "templates" not in path.parts:
            if found := _third_party_imports(path):
                used[name] = found
    assert used == {"click_build.deflate": {"zlib_ng"},
                    "click_build.sysroot.extract": {"zstandard"}}
