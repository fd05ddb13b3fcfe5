"""Every name a script of tests/, benchmarks/ or mpijobs/ takes from a module
of this repository exists there.

The scripts import one another absolutely from the repository's root
(mpijobs, benchmarks.common, tests.mpi.scenario). A name that a refactor
removed from a module fails only when the line runs, which for a benchmark
stage can be a rare branch (run_false_failures.py called a helper of
benchmarks.common that no longer existed, and only its loaded setup
reached it). This reads every script, resolves the modules it imports from
the repository, and checks each `module.name` it uses and each
`from module import name`. Exit 0 when all resolve."""
import ast
import importlib
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("mpijobs", "benchmarks", "tests")


def in_repo(module):
    return module.split(".")[0] in PACKAGES


def imported_modules(tree):
    """alias -> module, for the repository's modules a script imports."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for name in node.names:
                if in_repo(name.name) and name.asname:
                    aliases[name.asname] = name.name
        elif isinstance(node, ast.ImportFrom) and node.module and in_repo(node.module):
            for name in node.names:
                full = f"{node.module}.{name.name}"
                if importlib.util.find_spec(node.module) and _is_module(full):
                    aliases[name.asname or name.name] = full
    return aliases


def _is_module(name):
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def problems_in(path):
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and in_repo(node.module):
            module = importlib.import_module(node.module)
            for name in node.names:
                if not hasattr(module, name.name) and not _is_module(f"{node.module}.{name.name}"):
                    found.append(f"{path}:{node.lineno}: {node.module} has no {name.name}")
    aliases = imported_modules(tree)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases):
            module = importlib.import_module(aliases[node.value.id])
            if not hasattr(module, node.attr):
                found.append(f"{path}:{node.lineno}: {aliases[node.value.id]} has no {node.attr}")
    return found


def main():
    scripts = sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py")
                     if "build" not in p.parts)
    found = [problem for script in scripts for problem in problems_in(script)]
    for problem in found:
        print(problem)
    print(f"{len(scripts)} scripts, {len(found)} unresolved names")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
