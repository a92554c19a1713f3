"""The shape of acp_plus, read from its sources with `ast`: small modules, no import
cycle, no pass-through re-export, and a tool supervisor that imports only the stdlib.

Import edges count every `import` a module can execute: module level and inside
functions alike (a lazy import is exactly how a cycle hides), but not the bodies of
`if TYPE_CHECKING:`, which never run (annotations are strings here).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from plus_agent import REPO

MAX_LINES = 400
PACKAGE = "acp_plus"


def sources(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module under `root` (a package directory)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _executable(node: ast.AST) -> Iterator[ast.AST]:
    """Every node below `node` that can run, leaving out `if TYPE_CHECKING:` bodies."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:
                yield other
                yield from _executable(other)
            continue
        yield child
        yield from _executable(child)


def _base(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    # `from .x import y` inside package p.q resolves against p.q (a module's package).
    if node.level == 0:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    anchor = package[: len(package) - node.level + 1]
    return ".".join([*anchor, node.module] if node.module else anchor)


def imports(module: str, path: Path, known: Mapping[str, Path]) -> set[str]:
    """The modules of `known` that `module` (at `path`) imports anywhere it can run."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    edges: set[str] = set()
    for node in _executable(tree):
        if isinstance(node, ast.Import):
            edges.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = _base(module, is_package, node)
            for alias in node.names:
                target = f"{base}.{alias.name}"
                if target in known:
                    edges.add(target)  # a submodule
                elif base in known:
                    edges.add(base)  # a name defined in the module (or package)
    edges.discard(module)
    return edges


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def pass_throughs(path: Path) -> list[str]:
    """Re-exports in one module: `from m import x as x`, `import *`, and `__all__` entries
    that name an imported rather than a defined name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported: set[str] = set()
    problems: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    problems.append(f"line {node.lineno}: import *")
                elif alias.asname is not None and alias.asname == alias.name.rsplit(".", 1)[-1]:
                    problems.append(f"line {node.lineno}: {alias.name} as {alias.asname}")
                imported.add(alias.asname or alias.name.split(".")[0])
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            listed = ast.literal_eval(node.value)
            problems += [f"__all__ lists imported {name}" for name in listed if name in imported]
    return problems


def import_graph(root: Path) -> dict[str, set[str]]:
    known = sources(root)
    return {name: imports(name, path, known) for name, path in known.items()}


SOURCES = sources(REPO / PACKAGE)


def test_the_sources_are_found() -> None:
    # Guards the checks below against passing vacuously on an empty or wrong tree.
    assert {"acp_plus.methods", "acp_plus.core.agent", "acp_plus.core.tools.proctree"} <= set(
        SOURCES
    )


@pytest.mark.parametrize("module", sorted(SOURCES))
def test_no_module_is_over_400_lines(module: str) -> None:
    lines = len(SOURCES[module].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{module} has {lines} lines; split it by job"


def test_no_import_cycle() -> None:
    assert cycles(import_graph(REPO / PACKAGE)) == []


@pytest.mark.parametrize("module", sorted(SOURCES))
def test_no_pass_through_reexport(module: str) -> None:
    assert pass_throughs(SOURCES[module]) == []


def test_the_tool_supervisor_imports_only_the_stdlib_and_the_proc_reader() -> None:
    # `_reaper.py` runs as `python -I -S` in its own process, for every bash call: any
    # import of package code would run acp_plus's __init__ files and slow each start.
    allowed = set(sys.stdlib_module_names) | {"proctree"}
    for name in ("acp_plus.core.tools._reaper", "acp_plus.core.tools.proctree"):
        tree = ast.parse(SOURCES[name].read_text(encoding="utf-8"))
        top: set[str] = set()
        for node in _executable(tree):
            if isinstance(node, ast.Import):
                top.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                top.add(node.module.split(".")[0])
        # _reaper's one package import is the `__package__` branch, taken only when
        # something imports it as a module rather than running it.
        assert top - allowed <= ({PACKAGE} if name.endswith("_reaper") else set()), name


# -- the checks themselves, on made-up packages ----------------------------------------


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_a_lazy_import_closes_a_cycle(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from pkg.b import f\n",
            "b.py": "def f():\n    from pkg import a\n",
            "c.py": "from .a import x\n",
        },
    )
    assert cycles(import_graph(root)) == [["pkg.a", "pkg.b"]]


def test_type_checking_imports_are_not_edges(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "import pkg.b\n",
            "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.a\n",
        },
    )
    assert cycles(import_graph(root)) == []


def test_re_exports_are_found(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "m.py": "from x import y as y\nfrom x import z\nfrom w import *\n"
            "def own(): ...\n__all__ = ['z', 'own']\n"
        },
    )
    assert pass_throughs(root / "m.py") == [
        "line 1: y as y",
        "line 3: import *",
        "__all__ lists imported z",
    ]
