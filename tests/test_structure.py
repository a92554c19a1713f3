"""The layout rules of a package, checked by parsing its source with `ast`.

For each `Layout` (the package, plus the source trees whose imports of it are checked):

- no module over `MAX_LINES` lines;
- no import cycle among the package's modules, and none among its folders (each
  subpackage, or top-level module, is one node: the folders follow the data flow);
- with an architecture doc that documents an order (`documented_order`), each folder
  imports only the folders above it in that list, or its leaves;
- no pass-through import: no `from m import x as x`, and no module importing a name it
  never uses (a package `__init__` may import the names its `__all__` declares);
- every import names the defining module: no caller imports a name from a module (or a
  package `__init__`) that only imported it;
- with `bare_inits`, every package `__init__` is a docstring and nothing else;
- with an architecture doc, its `## Modules` table names every module, and nothing else;
- with a `## Layers` table in that doc: every module sits in one of its folders (the
  package root keeps only `__init__` and `__main__`, the entry), no folder imports a
  folder the table lists above it, and the last folder (the core) imports nothing
  outside itself.

Every import counts, at module level, inside functions or under `TYPE_CHECKING`: a lazy
import still couples two modules. The first tests run the checks on small packages
written to break each rule, so each check is shown to fail when it should.
"""

from __future__ import annotations

import ast
import functools
import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 400


@dataclass(frozen=True)
class Layout:
    """A package and the source trees (relative to the repository) that import it."""

    package: str
    callers: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    """Trees below the callers that are left out (another package's own tests)."""
    architecture: str = ""
    """The package's architecture doc, whose module table must name every module."""
    bare_inits: bool = False
    """Every package `__init__` is a docstring only (no surface, no code)."""
    ordered: bool = False
    """The architecture doc lists the folders in import order (`documented_order`)."""


LAYOUTS = [
    Layout(
        "parity",
        callers=("tests", "bench"),
        architecture="parity/ARCHITECTURE.md",
        bare_inits=True,
        ordered=True,
    ),
    Layout("acp_plus", callers=("tests", "bench"), architecture="acp_plus/ARCHITECTURE.md"),
]


@dataclass(frozen=True)
class Module:
    name: str
    """Dotted name, e.g. `parity.view.normalize` (a package's `__init__` is the package)."""
    path: Path
    tree: ast.Module
    lines: int

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"


def load_modules(base: Path, package: str) -> dict[str, Module]:
    """Every module of `package`, which lives at `base / package`."""
    out: dict[str, Module] = {}
    for path in sorted((base / package).rglob("*.py")):
        parts = path.relative_to(base).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        text = path.read_text(encoding="utf-8")
        out[name] = Module(name, path, ast.parse(text, str(path)), len(text.splitlines()))
    return out


def source_files(base: Path, trees: tuple[str, ...], exclude: tuple[str, ...]) -> list[Path]:
    skip = [base / e for e in exclude]
    return [
        path
        for tree in trees
        for path in sorted((base / tree).rglob("*.py"))
        if not any(path.is_relative_to(s) for s in skip)
    ]


@dataclass(frozen=True)
class Import:
    line: int
    module: str
    """The imported module, resolved: `from a.b import c` names `a.b.c` when that is a
    module, else `a.b` (with `c` in `names`)."""
    names: tuple[tuple[str, str], ...] = ()
    """(name, bound as) of a `from` import of names (not of submodules)."""


def _absolute(node: ast.ImportFrom, current: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = current.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def imports_of(
    tree: ast.Module, current: str, is_package: bool, known: set[str]
) -> Iterator[Import]:
    """Every import in `tree` (anywhere in it) of a module in `known`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    yield Import(node.lineno, alias.name)
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node, current, is_package)
            names = []
            for alias in node.names:
                if f"{source}.{alias.name}" in known:
                    yield Import(node.lineno, f"{source}.{alias.name}")
                else:
                    names.append((alias.name, alias.asname or alias.name))
            if names and source in known:
                yield Import(node.lineno, source, tuple(names))


def import_graph(modules: dict[str, Module]) -> dict[str, set[str]]:
    known = set(modules)
    return {
        name: {i.module for i in imports_of(m.tree, name, m.is_package, known)} - {name}
        for name, m in modules.items()
    }


def folder_of(name: str, package: str) -> str:
    """`parity.view.normalize` -> `parity.view`; `parity.config` -> `parity.config`."""
    parts = name.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else package


def folder_graph(graph: dict[str, set[str]], package: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for name, targets in graph.items():
        here = folder_of(name, package)
        node = out.setdefault(here, set())
        # The package root's own __init__ is no folder in the flow.
        node |= {folder_of(t, package) for t in targets} - {here, package}
    out.pop(package, None)
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
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


def oversized(modules: dict[str, Module], limit: int = MAX_LINES) -> list[str]:
    return [f"{m.path}: {m.lines} lines" for m in modules.values() if m.lines > limit]


def _declared(tree: ast.Module) -> set[str]:
    """The names in a module's `__all__`."""
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                value = node.value
                if isinstance(value, ast.List | ast.Tuple):
                    return {e.value for e in value.elts if isinstance(e, ast.Constant)}
    return set()


def _used_names(tree: ast.Module) -> set[str]:
    """Every name the module reads, also inside string annotations."""
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            used.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                expr = ast.parse(node.value, mode="eval")
            except (SyntaxError, ValueError):  # not code; ValueError: a lone surrogate
                continue
            used |= {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}
    return used


def _bound_by_imports(tree: ast.Module) -> Iterator[tuple[int, str, str, str]]:
    """(line, module, name, bound as) for every name an import statement binds."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, alias.name, alias.asname or alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            for alias in node.names:
                yield node.lineno, node.module or ".", alias.name, alias.asname or alias.name


def pass_throughs(modules: dict[str, Module]) -> list[str]:
    """`from m import x as x` re-exports, and names a module imports but never uses
    (a package `__init__` may import the names of its `__all__`)."""
    out = []
    for m in modules.values():
        used = _used_names(m.tree)
        declared = _declared(m.tree) if m.is_package else set()
        for line, source, name, bound in _bound_by_imports(m.tree):
            where = f"{m.path}:{line}"
            if name == bound and name != "*" and _is_redundant_alias(m.tree, line, name):
                out.append(f"{where}: `from {source} import {name} as {name}` re-exports")
            elif bound not in used and bound not in declared:
                out.append(f"{where}: imports {name!r} from {source} only to pass it on")
    return out


def _is_redundant_alias(tree: ast.Module, line: int, name: str) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom) and node.lineno == line:
            return any(a.name == name and a.asname == name for a in node.names)
    return False


def _defined(tree: ast.Module) -> set[str]:
    """The names a module defines at its top level (also under `if` and `try`)."""
    out: set[str] = set()
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                out |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.If | ast.Try):
            pending += node.body + node.orelse
            if isinstance(node, ast.Try):
                pending += node.finalbody + [s for h in node.handlers for s in h.body]
    return out


def surfaces(modules: dict[str, Module]) -> dict[str, set[str]]:
    """Module -> the names it offers without defining them: the names it imports (and,
    for a package, its `__all__`), which a caller would get second hand."""
    out: dict[str, set[str]] = {}
    for m in modules.values():
        imported = {bound for _, _, _, bound in _bound_by_imports(m.tree)}
        declared = _declared(m.tree) if m.is_package else set()
        offered = (declared | imported) - _defined(m.tree) - {"TYPE_CHECKING", "annotations"}
        if offered:
            out[m.name] = offered
    return out


def init_code(modules: dict[str, Module]) -> list[str]:
    """Package `__init__`s that hold more than their docstring."""
    out = []
    for m in modules.values():
        body = m.tree.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]
        if m.is_package and body:
            out.append(f"{m.path}:{body[0].lineno}: a package `__init__` is a docstring only")
    return out


def documented_order(doc: str) -> tuple[list[str], set[str]]:
    """(folders in their documented order, leaves) from the architecture doc's paragraph
    that says "a folder imports only folders above it in this list": the backticked
    names outside parentheses, in order, and the backticked `*.py` names (the leaves
    every folder may import). Both empty when the doc has no such paragraph."""
    paragraphs = doc.split("\n\n")
    found = [p for p in paragraphs if "imports only folders above it in this list" in p]
    if not found:
        return [], set()
    text = " ".join(found[0].split())
    leaves = set(re.findall(r"`(\w+)\.py`", text))
    after = text.partition("in this list")[2]
    while (bare := re.sub(r"\([^()]*\)", "", after)) != after:
        after = bare
    order = re.findall(r"`([^`]+)`", after.partition(".")[0])
    return order, leaves


def order_violations(
    folders: dict[str, set[str]], order: list[str], leaves: set[str], package: str
) -> list[str]:
    """Folder imports against the documented order: a folder imports only the folders
    above it in `order`, and the `leaves`; a leaf imports no folder."""
    rank = {f"{package}.{name}": i for i, name in enumerate(order)}
    leaf = {f"{package}.{name}" for name in leaves}
    out = []
    for here in sorted(folders):
        if here not in rank and here not in leaf:
            out.append(f"{here} is not in the documented order")
            continue
        for there in sorted(folders[here] - leaf):
            if here in leaf:
                out.append(f"{here} is a leaf but imports {there}")
            elif there not in rank:
                out.append(f"{here} imports {there}, which is not in the documented order")
            elif rank[there] >= rank[here]:
                out.append(f"{here} imports {there}, which comes after it in the documented order")
    return out


def surface_imports(modules: dict[str, Module], callers: list[Path], base: Path) -> list[str]:
    """Imports of a name through a package's surface instead of its defining module."""
    offered = surfaces(modules)
    known = set(modules)
    files = [(m.path, m.name, m.is_package, m.tree) for m in modules.values()]
    for path in callers:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        files.append((path, path.relative_to(base).with_suffix("").as_posix(), False, tree))
    out = []
    for path, name, is_package, tree in files:
        for imp in imports_of(tree, name, is_package, known):
            through = offered.get(imp.module, set()) & {n for n, _ in imp.names}
            if through and imp.module != name:
                names = ", ".join(sorted(through))
                out.append(f"{path}:{imp.line}: {names} from {imp.module}, not its defining module")
    return out


def documented_modules(doc: str) -> set[str]:
    """The files the `## Modules` table names: the first cell of each row, where a name
    without a folder (`` `b.py` `` after `` `pkg/a.py` ``) is in the folder of the first."""
    out: set[str] = set()
    section = doc.partition("\n## Modules\n")[2].partition("\n## ")[0]
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        names = re.findall(r"`([^`]+)`", line.split("|")[1])
        folder = names[0].rpartition("/")[0] if names else ""
        for name in names:
            out.add(name if "/" in name or not folder else f"{folder}/{name}")
    return out


def undocumented(base: Path, package: str, doc: str) -> tuple[list[str], list[str]]:
    """(modules the table does not name, names in the table that are not files)."""
    files = {
        p.relative_to(base / package).as_posix()
        for p in (base / package).rglob("*")
        if p.is_file()
        and p.suffix in (".py", ".toml", ".mjs", ".json")
        and p.name not in ("__init__.py", "__main__.py")
    }
    named = documented_modules(doc)
    return sorted(files - named), sorted(n for n in named if not (base / package / n).exists())


def documented_layers(doc: str) -> list[str]:
    """The folders of the `## Layers` table, top layer first (the first cell of each row,
    `` `server/` `` -> `server`); empty when the doc has no such section."""
    section = doc.partition("\n## Layers\n")[2].partition("\n## ")[0]
    return [
        re.findall(r"`([^`]+)/`", line.split("|")[1])[0]
        for line in section.splitlines()
        if line.startswith("| `")
    ]


def unlayered(modules: dict[str, Module], package: str, layers: list[str]) -> list[str]:
    """Modules in no layer's folder, and layer folders that do not exist; the package's
    own `__init__` and `__main__` are the entry, above every layer."""
    folders = {f"{package}.{layer}" for layer in layers}
    entry = {package, f"{package}.__main__"}
    stray = {folder_of(name, package) for name in modules} - folders - entry
    missing = {f for f in folders if f not in modules}
    return sorted(f"{name}: in no layer" for name in stray) + sorted(
        f"{name}: a layer without a folder" for name in missing
    )


def upward_imports(graph: dict[str, set[str]], package: str, layers: list[str]) -> list[str]:
    """Imports of a layer (or the entry) by a layer the list names below it (`layers`: top
    first). Imports within a layer, and downward across any number of layers, are fine."""
    rank = {f"{package}.{layer}": i for i, layer in enumerate(layers)}
    out = []
    for name, targets in graph.items():
        here = rank.get(folder_of(name, package))
        if here is None:  # the entry, which may import any layer
            continue
        for target in sorted(targets):
            there = rank.get(folder_of(target, package), -1)
            if there < here:
                out.append(f"{name} imports {target}: a layer above it")
    return sorted(out)


def outside_imports(graph: dict[str, set[str]], package: str, folder: str) -> list[str]:
    """Imports by the modules of `package.folder` of modules outside that folder."""
    inside = f"{package}.{folder}"
    return sorted(
        f"{name} imports {target}"
        for name, targets in graph.items()
        if folder_of(name, package) == inside
        for target in targets
        if folder_of(target, package) != inside
    )


# -- the checks, shown to fail on packages that break each rule ---------------------------


def _package(base: Path, files: dict[str, str]) -> dict[str, Module]:
    for rel, text in files.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return load_modules(base, "pkg")


def test_a_module_cycle_is_found_also_through_lazy_and_type_checking_imports(
    tmp_path: Path,
) -> None:
    modules = _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from pkg.b import f\nx = f\n",
            "pkg/b.py": "def f():\n    from pkg import c\n    return c\n",
            "pkg/c.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import x\n"
            ),
            "pkg/d.py": "from pkg.a import x\ny = x\n",
        },
    )
    assert cycles(import_graph(modules)) == [["pkg.a", "pkg.b", "pkg.c"]]


def test_a_folder_cycle_is_found_without_a_module_cycle(tmp_path: Path) -> None:
    modules = _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/up/__init__.py": "",
            "pkg/up/one.py": "from pkg.down.two import y\nx = y\n",
            "pkg/up/three.py": "z = 3\n",
            "pkg/down/__init__.py": "",
            "pkg/down/two.py": "y = 2\n",
            "pkg/down/four.py": "from pkg.up.three import z\nw = z\n",
        },
    )
    graph = import_graph(modules)
    assert cycles(graph) == []
    assert cycles(folder_graph(graph, "pkg")) == [["pkg.down", "pkg.up"]]


def test_re_exports_and_names_only_passed_on_are_found(tmp_path: Path) -> None:
    modules = _package(
        tmp_path,
        {
            "pkg/__init__.py": "from pkg.a import f, g\n__all__ = ['f']\n",
            "pkg/a.py": "def f(): ...\ndef g(): ...\n",
            "pkg/b.py": "from pkg.a import f as f\n",
            "pkg/c.py": "from pkg.a import g\n",
            "pkg/d.py": "from pkg.a import f, g\nx: 'g' = f()\n",
        },
    )
    found = pass_throughs(modules)
    assert [line.split(": ", 1)[1] for line in found] == [
        "imports 'g' from pkg.a only to pass it on",
        "`from pkg.a import f as f` re-exports",
        "imports 'g' from pkg.a only to pass it on",
    ]
    assert [Path(line.split(":")[0]).name for line in found] == ["__init__.py", "b.py", "c.py"]


def test_imports_through_a_package_surface_are_found(tmp_path: Path) -> None:
    modules = _package(
        tmp_path,
        {
            "pkg/__init__.py": "from pkg.a import f\n__all__ = ['f']\n",
            "pkg/a.py": "def f(): ...\n",
            "pkg/b.py": "from pkg import a\nfrom pkg.a import f\nx = (a, f)\n",
        },
    )
    caller = tmp_path / "tests" / "test_x.py"
    caller.parent.mkdir()
    caller.write_text("from pkg import f\nfrom pkg.a import f as g\n")
    assert surface_imports(modules, [caller], tmp_path) == [
        f"{caller}:1: f from pkg, not its defining module"
    ]


def test_a_re_export_through_a_plain_module_is_found(tmp_path: Path) -> None:
    modules = _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "def f(): ...\n",
            "pkg/b.py": "from pkg.a import f\nx = f\n",
            "pkg/c.py": "from pkg.b import f, x\ny = (f, x)\n",
        },
    )
    found = surface_imports(modules, [], tmp_path)
    assert [line.split(": ", 1)[1] for line in found] == ["f from pkg.b, not its defining module"]


def test_code_in_a_package_init_is_found(tmp_path: Path) -> None:
    modules = _package(
        tmp_path,
        {
            "pkg/__init__.py": '"""Only a docstring."""\n',
            "pkg/sub/__init__.py": '"""A surface."""\n\nfrom pkg.sub.a import f\n',
            "pkg/sub/a.py": "def f(): ...\n",
        },
    )
    assert init_code(modules) == [
        f"{tmp_path / 'pkg/sub/__init__.py'}:3: a package `__init__` is a docstring only"
    ]


ORDER_DOC = """# pkg

Imports follow the same direction: a folder imports only folders above it in this list
(`leaf.py` is a leaf everyone may use): `up`,
`down` (`down` needs `up`, so it comes after `up`). `tests/x.py` checks it.

## Modules
"""


def test_the_documented_order_is_read_from_its_paragraph() -> None:
    assert documented_order(ORDER_DOC) == (["up", "down"], {"leaf"})
    assert documented_order("# pkg\n\nNo order here.\n") == ([], set())


def test_an_import_against_the_documented_order_is_found(tmp_path: Path) -> None:
    modules = _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/leaf.py": "from pkg.up.one import x\ny = x\n",
            "pkg/up/__init__.py": "",
            "pkg/up/one.py": "from pkg.down.two import z\nx = z\n",
            "pkg/down/__init__.py": "",
            "pkg/down/two.py": "from pkg.leaf import y\nz = y\n",
            "pkg/stray.py": "",
        },
    )
    order, leaves = documented_order(ORDER_DOC)
    found = order_violations(folder_graph(import_graph(modules), "pkg"), order, leaves, "pkg")
    assert found == [
        "pkg.leaf is a leaf but imports pkg.up",
        "pkg.stray is not in the documented order",
        "pkg.up imports pkg.down, which comes after it in the documented order",
    ]


def test_a_module_missing_from_the_architecture_table_is_found(tmp_path: Path) -> None:
    _package(
        tmp_path, {"pkg/__init__.py": "", "pkg/a/one.py": "", "pkg/a/two.py": "", "pkg/b.py": ""}
    )
    doc = (
        "# pkg\n\n## Modules\n\n| module | job |\n|---|---|\n"
        "| `a/one.py`, `gone.py` | ... |\n| `b.py` | ... |\n\n## Elsewhere\n\n| `a/two.py` |\n"
    )
    assert undocumented(tmp_path, "pkg", doc) == (["a/two.py"], ["a/gone.py"])


def test_an_oversized_module_is_found(tmp_path: Path) -> None:
    modules = _package(tmp_path, {"pkg/__init__.py": "", "pkg/big.py": "x = 1\n" * 401})
    assert oversized(modules) == [f"{tmp_path / 'pkg/big.py'}: 401 lines"]


_LAYERED = {
    "pkg/__init__.py": "",
    "pkg/__main__.py": "from pkg.top.a import f\nf()\n",
    "pkg/top/__init__.py": "",
    "pkg/top/a.py": "from pkg.base.c import h\ndef f(): return h\n",
    "pkg/mid/__init__.py": "",
    "pkg/mid/b.py": "def g():\n    from pkg.top.a import f\n    return f\n",
    "pkg/base/__init__.py": "",
    "pkg/base/c.py": "from pkg.mid.b import g\nh = g\n",
    "pkg/loose.py": "",
}
_LAYERS_DOC = (
    "# pkg\n\n## Layers\n\n| layer | job |\n|---|---|\n| `top/` | ... |\n"
    "| `mid/` | ... |\n| `base/` | the core |\n| `gone/` | ... |\n\n## Modules\n\n| `x/` |\n"
)


def test_the_layers_table_is_read_top_first() -> None:
    assert documented_layers(_LAYERS_DOC) == ["top", "mid", "base", "gone"]
    assert documented_layers("# pkg\n\n## Modules\n") == []


def test_a_module_outside_the_layers_and_a_layer_without_a_folder_are_found(
    tmp_path: Path,
) -> None:
    modules = _package(tmp_path, _LAYERED)
    assert unlayered(modules, "pkg", documented_layers(_LAYERS_DOC)) == [
        "pkg.loose: in no layer",
        "pkg.gone: a layer without a folder",
    ]


def test_an_import_of_a_layer_above_is_found_also_when_lazy(tmp_path: Path) -> None:
    graph = import_graph(_package(tmp_path, _LAYERED))
    assert upward_imports(graph, "pkg", ["top", "mid", "base"]) == [
        "pkg.base.c imports pkg.mid.b: a layer above it",
        "pkg.mid.b imports pkg.top.a: a layer above it",
    ]


def test_an_import_out_of_the_core_is_found(tmp_path: Path) -> None:
    graph = import_graph(_package(tmp_path, _LAYERED))
    assert outside_imports(graph, "pkg", "base") == ["pkg.base.c imports pkg.mid.b"]
    assert outside_imports(graph, "pkg", "top") == ["pkg.top.a imports pkg.base.c"]


# -- the rules, for each layout -----------------------------------------------------------


def _package_id(layout: Layout) -> str:
    return layout.package


# Module scope also keeps this module's tests on one xdist worker (tests/support/schedule.py),
# which then parses each package once, not once per worker.
@pytest.fixture(scope="module", params=LAYOUTS, ids=_package_id)
def layout(request: pytest.FixtureRequest) -> Layout:
    chosen: Layout = request.param
    return chosen


@functools.cache
def project_modules(package: str) -> dict[str, Module]:
    """This checkout's modules of `package`, parsed once per session: a dozen rules read
    the same trees (parsing one package costs some 0.6 s of CPU), and none changes them."""
    return load_modules(ROOT, package)


@pytest.fixture
def modules(layout: Layout) -> dict[str, Module]:
    return project_modules(layout.package)


def test_no_module_is_oversized(modules: dict[str, Module]) -> None:
    assert oversized(modules) == []


def test_no_import_cycle(modules: dict[str, Module]) -> None:
    assert cycles(import_graph(modules)) == []


def test_the_folders_import_each_other_in_one_direction(
    layout: Layout, modules: dict[str, Module]
) -> None:
    assert cycles(folder_graph(import_graph(modules), layout.package)) == []


@pytest.mark.parametrize("ordered", [x for x in LAYOUTS if x.ordered], ids=_package_id)
def test_the_folders_import_only_folders_above_them_in_the_documented_order(
    ordered: Layout,
) -> None:
    """The order is read from the architecture doc each time, so editing the doc's list
    (a new folder, a move) is all a change of the order takes."""
    layout, modules = ordered, project_modules(ordered.package)
    order, leaves = documented_order((ROOT / layout.architecture).read_text(encoding="utf-8"))
    assert order, f"{layout.architecture}: no paragraph lists the folders in import order"
    graph = folder_graph(import_graph(modules), layout.package)
    assert order_violations(graph, order, leaves, layout.package) == []


@pytest.mark.parametrize("bare", [x for x in LAYOUTS if x.bare_inits], ids=_package_id)
def test_package_inits_are_docstrings_only(bare: Layout) -> None:
    assert init_code(project_modules(bare.package)) == []


def test_no_pass_through_import(modules: dict[str, Module]) -> None:
    assert pass_throughs(modules) == []


@pytest.mark.parametrize(
    "documented", [x for x in LAYOUTS if x.architecture], ids=lambda x: x.package
)
def test_the_architecture_doc_names_every_module(documented: Layout) -> None:
    layout = documented
    doc = (ROOT / layout.architecture).read_text(encoding="utf-8")
    assert undocumented(ROOT, layout.package, doc) == ([], [])


def test_callers_import_from_the_defining_module(
    layout: Layout, modules: dict[str, Module]
) -> None:
    callers = source_files(ROOT, layout.callers, layout.exclude)
    assert surface_imports(modules, callers, ROOT) == []


def test_the_cli_loads_no_hypothesis() -> None:
    """`parity run` runs pytest in the CLI's process: Hypothesis imported before pytest
    loads its plugin cannot be assertion-rewritten and warns in every run's output."""
    import subprocess
    import sys

    code = "import sys, parity.cli.main; print('hypothesis' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr


def test_a_parity_run_loads_no_hypothesis(tmp_path: Path) -> None:
    """Nor does the pytest session `parity run` starts: Hypothesis's pytest plugin would
    import all of Hypothesis at the end of it (0.7 s of CPU a run where bytecode is not
    written), and no scenario item is a Hypothesis test."""
    import subprocess
    import sys

    from tests.support.project import TEXT_SCENARIO, Project, child_env, mini_target

    project = Project(tmp_path / "proj")
    project.write("parity.toml", mini_target("mini") + mini_target("mini-b"))
    project.write("scenarios/demo/text.yaml", TEXT_SCENARIO)
    code = (
        "import sys\nfrom parity.cli.main import main\n"
        "code = main(['record', '-q'])\nprint(code, 'hypothesis' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=project.root,
        env=child_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout.splitlines()[-1] == "0 False", done.stdout + done.stderr


# -- the layers an architecture doc declares ----------------------------------------------


def _layers(layout: Layout) -> list[str]:
    if not layout.architecture:
        return []
    return documented_layers((ROOT / layout.architecture).read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Layered:
    """A layout whose architecture doc declares layers, its modules and the layers."""

    package: str
    modules: dict[str, Module]
    layers: list[str]


@pytest.fixture(params=[x for x in LAYOUTS if _layers(x)], ids=_package_id)
def layered(request: pytest.FixtureRequest) -> Layered:
    chosen: Layout = request.param
    return Layered(chosen.package, project_modules(chosen.package), _layers(chosen))


def test_every_module_sits_in_a_layer(layered: Layered) -> None:
    assert unlayered(layered.modules, layered.package, layered.layers) == []


def test_no_layer_imports_a_layer_above_it(layered: Layered) -> None:
    graph = import_graph(layered.modules)
    assert upward_imports(graph, layered.package, layered.layers) == []


def test_the_core_imports_nothing_outside_it(layered: Layered) -> None:
    """The last layer (acp_plus's `core/`) is free of every layer above it: no ACP-level
    module, no wire, no configuration."""
    graph = import_graph(layered.modules)
    assert outside_imports(graph, layered.package, layered.layers[-1]) == []


def test_acp_plus_declares_its_layers() -> None:
    """The layer checks are on for acp_plus (a doc without the table would not get them)."""
    (acp_plus,) = [x for x in LAYOUTS if x.package == "acp_plus"]
    assert _layers(acp_plus)[-1] == "core"


def test_parity_declares_its_layers() -> None:
    """The layer checks are on for parity too: its root keeps no module, `core/` last."""
    (parity,) = [x for x in LAYOUTS if x.package == "parity"]
    assert _layers(parity)[-1] == "core"


def test_parity_show_loads_neither_pytest_nor_syrupy() -> None:
    """`parity show` runs a scenario on the engine (`parity.engine`), without pytest:
    importing pytest and syrupy was 0.7 s of the 1.75 s a `parity show` of `plus` took.
    The command runs for real, so every module its run needs has been imported."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from parity.cli.main import main\n"
        "status = main(['show', 'baseline/handshake', 'plus'])\n"
        "heavy = {m.split('.')[0] for m in sys.modules} & {'pytest', '_pytest', 'syrupy'}\n"
        "print(status, sorted(heavy), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.stderr.splitlines()[-1:] == ["0 []"], done.stderr
