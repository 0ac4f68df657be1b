"""The import graph keeps the layout of docs/architecture.md: every package of fdbench imports only
the packages its row of the allowed-imports table names, and no two packages import each other,
directly or through others.

Every import counts: at the top of a module, inside functions, under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "fdbench"
DOC = ROOT / "docs" / "architecture.md"
#: The root package holds only ``__version__``: every package may read it.
ROOT_MODULE = "fdbench"
#: ``python -m fdbench`` runs the command line.
ENTRY = "__main__"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imported_modules(name: str, path: Path, known: set[str]) -> set[str]:
    """The fdbench modules that module ``name`` (file ``path``) imports anywhere, resolved: an
    imported name that is no module counts as its module."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def package_of(module: str) -> str:
    """``fdbench.data.sources.cache`` -> ``data``; the root module -> ``fdbench``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ROOT_MODULE


def package_imports() -> dict[str, dict[str, set[str]]]:
    """package -> imported package -> the modules that import it (``a.b -> c.d`` lines)."""
    modules = _modules()
    known = set(modules)
    graph: dict[str, dict[str, set[str]]] = {}
    for name, path in modules.items():
        source = package_of(name)
        graph.setdefault(source, {})
        for target in imported_modules(name, path, known):
            if package_of(target) not in (source, ROOT_MODULE):
                graph[source].setdefault(package_of(target), set()).add(f"{name} -> {target}")
    return graph


def allowed_imports(text: str) -> dict[str, set[str]]:
    """The allowed-imports table of docs/architecture.md: package -> packages it may import."""
    table = text.split("## Allowed imports", 1)[1]
    rows = re.findall(r"^\| *(\d+) *\| *`(\w+)/?` *\|[^|]*\|([^|]*)\|", table, re.M)
    if not rows:
        raise AssertionError("docs/architecture.md has no allowed-imports table")
    return {name: set(re.findall(r"`(\w+)/?`", may)) for _, name, may in rows}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``graph`` (node -> successors) as a list of nodes, first = last, or None."""
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                cycle = visit(nxt, [*path, nxt])
                if cycle:
                    return cycle
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            cycle = visit(start, [start])
            if cycle:
                return cycle
    return None


ALLOWED = allowed_imports(DOC.read_text(encoding="utf-8"))
GRAPH = package_imports()


def test_the_table_names_every_package_of_fdbench():
    packages = {p for p in GRAPH if p not in (ROOT_MODULE, ENTRY)}
    assert packages == set(ALLOWED), "every package needs its row in docs/architecture.md"
    for name, may in ALLOWED.items():
        assert may <= set(ALLOWED), f"{name}: unknown packages {sorted(may - set(ALLOWED))}"


def test_the_table_itself_points_one_way():
    """What the table allows is a layering: no package may reach itself through the table."""
    assert find_cycle(ALLOWED) is None


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_a_package_imports_only_what_its_row_allows(package):
    imports = GRAPH.get(package, {})
    extra = {
        target: sorted(lines) for target, lines in imports.items() if target not in ALLOWED[package]
    }
    assert not extra, f"{package} imports packages docs/architecture.md does not allow: {extra}"


def test_no_two_packages_import_each_other():
    cycle = find_cycle({source: set(targets) for source, targets in GRAPH.items()})
    assert cycle is None, f"import cycle between packages: {' -> '.join(cycle)}"


def test_the_config_imports_no_registry_and_no_stage_imports_jobs_or_cli():
    assert set(GRAPH.get("config", {})) <= {"core"}
    for source, targets in GRAPH.items():
        if source not in ("jobs", "cli", ENTRY):
            assert not {"jobs", "cli"} & set(targets), (source, targets)


def test_the_check_sees_every_kind_of_import(tmp_path):
    """A lazy import inside a function, a relative import and one under ``TYPE_CHECKING`` each
    count, so an upward import cannot hide in any of them."""
    module = tmp_path / "m.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "from .schema import X\n"
        "if TYPE_CHECKING:\n    from fdbench.jobs.plan import BenchmarkPlan\n"
        "def f():\n    import fdbench.cli.app\n    from fdbench.report import page\n"
    )
    known = {"fdbench.config.schema", "fdbench.jobs.plan", "fdbench.cli.app", "fdbench.report"}
    known |= {"fdbench.report.page"}
    found = imported_modules("fdbench.config.loader", module, known)
    assert found == {
        "fdbench.config.schema",
        "fdbench.jobs.plan",
        "fdbench.cli.app",
        "fdbench.report.page",
    }
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
