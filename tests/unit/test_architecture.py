"""The shape of the package (docs/architecture.md): each wing imports only the
wings below it, no module imports itself back through others (type-only imports
count), no module outgrows a sitting, and prune() runs without pyspark."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp
from importlinter.cli import lint_imports

import skipindex

PACKAGE = Path(skipindex.__file__).parent
ROOT = PACKAGE.parent
MAX_LINES = 400


def test_each_wing_imports_only_the_wings_below_it():
    """The layers contract in pyproject.toml ([tool.importlinter])."""
    assert lint_imports(config_filename=str(ROOT / "pyproject.toml")) == 0


def test_no_module_imports_itself_back():
    graph = grimp.build_graph("skipindex", exclude_type_checking_imports=False)
    cycles = _cycles({m: graph.find_modules_directly_imported_by(m) for m in graph.modules})
    assert cycles == [], "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def _cycles(imports: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(imports):
        if root in index:
            continue
        work = [(root, iter(sorted(imports[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(imports.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
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
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_every_module_reads_in_one_sitting():
    long = {
        str(path.relative_to(ROOT)): lines
        for path in PACKAGE.rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}, f"modules over {MAX_LINES} lines: split them by what they do"


def test_prune_runs_without_pyspark(tmp_path):
    code = f"""
import sys
import pyarrow as pa, pyarrow.parquet as pq
import skipindex as si
from skipindex.indexing.build import InProcessRunner, build_with
root = {str(tmp_path)!r}
pq.write_table(pa.table({{"a": [1, 2, 3]}}), root + "/f.parquet")
build_with(root, [si.MinMax("a"), si.EqualityBitmap("a")], InProcessRunner())
assert si.prune(root, "a = 2 AND year(CAST('2020-01-01' AS DATE)) = 2020").kept == 1
assert "pyspark" not in sys.modules, "pyspark imported"
"""
    subprocess.run([sys.executable, "-c", code], check=True)


def test_test_modules_have_unique_names():
    """Test folders have no __init__.py, so pytest imports each test module by its
    basename: two files of one name break collection of the whole suite."""
    names: dict[str, list[str]] = {}
    for path in (ROOT / "tests").rglob("test_*.py"):
        names.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    clashes = {name: paths for name, paths in names.items() if len(paths) > 1}
    assert clashes == {}, f"test modules sharing a name: {clashes}"
