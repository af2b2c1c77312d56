"""The code's own health, as CI sees it: ruff (lint and format), import-linter (dpcore's one-way layers, what dpcore
and ui may import) and mypy (dpcore, ui and the pages, check_untyped_defs) pass, and neither dpcore nor ui has an
import cycle, counting the imports inside functions (which import-linter's contracts also count). Configured in
pyproject.toml; installed by requirements-dev.txt."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    path = BIN / name
    if path.exists():
        return str(path)
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -r requirements-dev.txt)")
    return found


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing():
    proc = _run(_tool("ruff"), "check", "--output-format", "concise", ".")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_ruff_format_changes_nothing():
    proc = _run(_tool("ruff"), "format", "--check", ".")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:] + "\nrun: .venv/bin/ruff format ."


def test_import_contracts_hold():
    proc = _run(_tool("lint-imports"), "--no-cache")
    assert proc.returncode == 0 and "0 broken" in proc.stdout, proc.stdout[-4000:] + proc.stderr[-2000:]


def _pyproject() -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _import_contracts() -> list[dict]:
    return _pyproject()["tool"]["importlinter"]["contracts"]


def test_the_type_and_lint_checks_cover_the_app_and_the_oldest_python():
    """mypy checks the app too (ui and the pages, not only dpcore) for the oldest Python the package supports
    (typing names and stdlib modules differ by version: checked for 3.11 alone, a 3.10-only failure passes), and
    ruff's rules include an unused ``noqa`` (RUF100: a silenced rule nobody breaks any more) and private members
    of other objects (SLF001)."""
    config = _pyproject()
    oldest = config["project"]["requires-python"].removeprefix(">=")
    mypy = config["tool"]["mypy"]
    assert mypy["python_version"] == oldest
    assert {"dpcore", "ui", "app_pages"} <= set(mypy["files"]) and mypy["check_untyped_defs"] is True
    assert {"RUF100", "SLF001"} <= set(config["tool"]["ruff"]["lint"]["select"])


def test_the_import_contracts_name_a_few_layers_and_what_is_forbidden():
    """dpcore's layers contract names its layers (at most 10: a rung per module would freeze today's import order
    instead of stating a rule) and places every module (exhaustive); the forbidden imports are contracts, not a
    convention: dpcore never imports the UI, and only the mechanisms and the noise layer import the real samplers."""
    contracts = _import_contracts()
    dpcore_layers = [c for c in contracts if c["type"] == "layers" and c.get("containers") == ["dpcore"]]
    assert len(dpcore_layers) == 1 and len(dpcore_layers[0]["layers"]) <= 10
    assert dpcore_layers[0].get("exhaustive") is True
    forbidden = {
        (tuple(c["source_modules"]), m) for c in contracts if c["type"] == "forbidden" for m in c["forbidden_modules"]
    }
    assert {(("dpcore",), name) for name in ("streamlit", "plotly", "ui")} <= forbidden
    protected = [c for c in contracts if c["type"] == "protected" and c["protected_modules"] == ["dpcore.noise.secure"]]
    assert protected and sorted(protected[0]["allowed_importers"]) == ["dpcore.mechanisms", "dpcore.noise"]
    ui_layers = [c for c in contracts if c["type"] == "layers" and c.get("containers") == ["ui"]]
    assert len(ui_layers) == 1 and ui_layers[0].get("exhaustive") is True


def _mypy_cache_dir() -> str:
    """mypy's incremental cache, kept outside the checkout (``DPCORE_MYPY_CACHE_DIR``, else the user's cache
    directory) so that a fresh clone, another worktree and the next CI run on the machine find it.

    Why outside: a cold run analyses about 2,100 modules, 1,870 of them installed packages (Streamlit, pandas,
    numpy, pyspark: ~22 s of CPU, the suite's longest single test), and a cache inside a fresh clone is always
    cold. Why it gives the verdict of a full run: mypy takes a module's cached result only when its source
    hashes the same (the path and mtime may differ) and the interface hashes of its dependencies recorded with
    it (``dep_hashes``) are those of today's modules; writes are atomic renames. Measured on the 2-core machine:
    cold 22.2 s of CPU, a fresh clone with a warm cache 0.3 s, after one module changed 1.7 s (and its error found).
    """
    configured = os.environ.get("DPCORE_MYPY_CACHE_DIR")
    base = Path(configured) if configured else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    cache = base if configured else base / "dpcore-tests" / "mypy"
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError:  # a read-only home: a cache of this run only
        return tempfile.mkdtemp(prefix="dpcore-mypy-")
    return str(cache)


def test_mypy_finds_nothing():
    proc = _run(_tool("mypy"), "--cache-dir", _mypy_cache_dir())
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]


def _import_graph(package: str = "dpcore") -> dict[str, set[str]]:
    """Module of ``package`` -> the modules of ``package`` it imports, anywhere in its body (function-local
    imports included)."""
    modules = {}
    for path in (ROOT / package).rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    head = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(head + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            else:
                continue
            for target in targets:
                while target and target not in modules:
                    target = target.rsplit(".", 1)[0] if "." in target else ""
                if target and target != name:
                    graph[name].add(target)
    return graph


@pytest.mark.parametrize("package, modules", [("dpcore", 40), ("ui", 30)])
def test_no_import_cycle_counting_imports_inside_functions(package, modules):
    """No circle, not even through an import inside a function (ui.planner.views and release_panel imported each
    other that way: the shared state and the release choices now sit below both, in plan_state and choices)."""
    graph = _import_graph(package)
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt) :] + [nxt] if nxt in path else [node, nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    assert not cycles, cycles[:5]
    assert len(graph) > modules  # the walk saw the package


def test_only_the_mechanisms_and_the_noise_layer_import_the_real_samplers():
    """Every real draw is a mechanism's (dpcore.mechanisms): the samplers of real releases (dpcore.noise.secure:
    OpenDP and the certified sampler) are imported by that package and the noise layer only, counting imports
    inside functions, in dpcore, ui, app_pages and app.py."""
    allowed = (("dpcore", "mechanisms"), ("dpcore", "noise"))
    importers = []
    for path in [
        ROOT / "app.py",
        *(ROOT / "dpcore").rglob("*.py"),
        *(ROOT / "ui").rglob("*.py"),
        *(ROOT / "app_pages").rglob("*.py"),
    ]:
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[:2] in allowed:
            continue
        package = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = list(package[: len(package) - node.level + 1]) if node.level else []
                module = ".".join(base + ([node.module] if node.module else []))
                names = [module] + [f"{module}.{alias.name}" for alias in node.names]
            else:
                continue
            if any(name == "dpcore.noise.secure" or name.startswith("dpcore.noise.secure.") for name in names):
                importers.append(str(path.relative_to(ROOT)))
    assert not importers, importers


IMPORT_EVERY_DPCORE_MODULE = """
import importlib, pkgutil, sys
import dpcore
for info in pkgutil.walk_packages(dpcore.__path__, "dpcore."):
    if not info.name.endswith("__main__"):  # the entry script runs the command line
        importlib.import_module(info.name)
print(sorted({name.split(".")[0] for name in sys.modules} & {"streamlit", "plotly", "ui", "app_pages"}))
"""


def test_importing_every_dpcore_module_loads_no_ui():
    """The import contract reads import statements; this runs them: importing every module of dpcore (as a
    release on a server without the app does) loads neither Streamlit, plotly nor the app's packages, also
    through importlib or a lazy import made at module level."""
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_EVERY_DPCORE_MODULE], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]", done.stdout


def test_one_class_per_public_name_in_dpcore():
    """A public class name means one thing, so a reader never has to ask which ``PlanCost`` a name is: one
    vocabulary for the plan file, the planner and the app (``dpcore.budget.PlanCost`` is every plan's cost; the
    planner's target is ``StatisticTarget``, the plan file's statistic ``StatisticSpec``)."""
    where: dict[str, list[str]] = {}
    for path in (ROOT / "dpcore").rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                where.setdefault(node.name, []).append(str(path.relative_to(ROOT)))
    twice = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert not twice, twice
    assert len(where) > 100  # the walk saw the package


def test_no_private_name_imported_from_another_module():
    """A name one module uses from another is public there (ruff's SLF001 sees ``module._name``, not ``from module
    import _name``): a private name stays in its module, so its module can change it without asking who else reads
    it. dpcore, ui and app_pages; tests and benchmarks may reach into the internals they check and time."""
    first_party = ("dpcore", "ui", "app_pages")
    imports = []
    for top in first_party:
        for path in (ROOT / top).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            package = parts[:-1]
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.ImportFrom):
                    continue
                base = list(package[: len(package) - node.level + 1]) if node.level else []
                module = ".".join(base + ([node.module] if node.module else []))
                if module.split(".")[0] not in first_party:
                    continue
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        imports.append(f"{path.relative_to(ROOT)}:{node.lineno}: from {module} import {alias.name}")
    assert not imports, imports


@pytest.mark.parametrize("package", ["dpcore", "ui"])
def test_no_module_over_1500_lines(package):
    """A module of several concerns becomes a package, one concern per module (docs/CONVENTIONS.md: under ~800
    lines, none over 1,500), so a reader finds a rule in the module named for it."""
    sizes = {
        str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines())
        for p in (ROOT / package).rglob("*.py")
    }
    assert sizes and not {name: n for name, n in sizes.items() if n > 1500}


def test_every_page_stays_under_250_lines():
    """A page reads as controls -> one view call -> renderers on a screen or two (docs/CONVENTIONS.md); what
    grows past that moves into the page's ``ui/<page>/`` package."""
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in (ROOT / "app_pages").glob("*.py")}
    assert len(sizes) >= 8 and not {name: n for name, n in sizes.items() if n >= 250}, sizes
