"""No two of the project's modules import each other, directly or around a circle.

The graph: every module of glm1m/, server/ and chainlit_app/ (named as the code imports it,
server/x.py as glm1m.server.x, chainlit_app/x.py as glm1m.chainlit_app.x), an edge for each import
of another of them. Imports inside functions count as much as those at the top of a file: a lazy
import only moves when the coupling is paid, not whether the two modules lean on each other (a
circle hidden behind one is the one an outside review found between cli/router and cli/serve).
Imports under `if TYPE_CHECKING:` are left out: they run only for mypy, name a type, and a type
checker needs no order of loading. Importing a.b.c runs a/__init__.py and a/b/__init__.py too, so
those packages are edges as well.

The circles are the strongly connected components of more than one module (and a module importing
itself), found with Tarjan's algorithm written here, since networkx is no dependency."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import ROOT

# The checkout's folders and the package names they are installed as (pyproject.toml maps them).
FOLDERS = {"glm1m": "glm1m", "server": "glm1m.server", "chainlit_app": "glm1m.chainlit_app"}


def module_name(path: Path) -> str:
    """glm1m/documents/answer.py -> glm1m.documents.answer; a package's __init__.py -> the package."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([FOLDERS[parts[0]], *parts[1:]])


def project_modules() -> dict[str, Path]:
    return {module_name(p): p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py")}


def is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def import_nodes(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import at any depth, but not the body of an `if TYPE_CHECKING:` (its else still runs)."""
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
        return
    if isinstance(node, ast.If) and is_type_checking(node.test):
        children: list[ast.AST] = list(node.orelse)
    else:
        children = list(ast.iter_child_nodes(node))
    for child in children:
        yield from import_nodes(child)


def absolute(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    """The module a `from ... import` names, a relative one resolved against its importer."""
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def with_packages(module: str, known: dict[str, Path]) -> set[str]:
    """The module and every package above it that is one of ours: importing it runs them all."""
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)} & set(known)


def imported_by(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The project's modules that `name` imports (itself excluded only if it never names itself)."""
    found: set[str] = set()
    for node in import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            source = absolute(node, name, path.name == "__init__.py")
            # `from pkg import mod` imports the module pkg.mod when there is one, else a name of pkg.
            targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in known else source
                       for a in node.names]
        for target in targets:
            found |= with_packages(target, known)
    # A module's own packages run before it, never because of it: those are no edges back.
    return {m for m in found if not name.startswith(m + ".") or m == name}


def import_graph() -> dict[str, set[str]]:
    known = project_modules()
    return {name: imported_by(name, path, known) for name, path in known.items()}


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (no recursion limit on a long chain of imports)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph.get(successor, ())))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    return [c for c in strongly_connected(graph) if len(c) > 1 or c[0] in graph[c[0]]]


def test_the_circle_finder_finds_circles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}, "f": {"d"}}
    assert sorted(circles(graph)) == [["a", "b", "c"], ["e"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_graph_reads_the_code_as_it_imports() -> None:
    graph = import_graph()
    assert "glm1m.server.launch" in graph and "glm1m.chainlit_app.app" in graph
    assert "glm1m.errors" in graph["glm1m.server.launch"]
    assert "glm1m.documents.formats" in graph["glm1m.chainlit_app.uploads"]
    lazy = "glm1m.documents.answer"  # imported inside the command function (cli/summarize.py)
    assert lazy in graph["glm1m.cli.summarize"]


def test_no_module_imports_itself_around_a_circle() -> None:
    found = circles(import_graph())
    assert found == [], "import circles:\n" + "\n".join(" <-> ".join(c) for c in found)
