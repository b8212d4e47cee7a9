"""The dependency rule of docs/design.md 3, checked on every import statement."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "annotator"
IO_MODULES = {
    "sqlite3",
    "sqlalchemy",
    "alembic",
    "PySide6",
    "openai",
    "PIL",
    "requests",
    "httpx",
    "socket",
    "urllib",
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
    return out


def _relative_targets(path: Path) -> set[str]:
    """Sub-packages of annotator that `path` imports relatively or absolutely."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    pkg_parts = path.relative_to(PKG).parts[:-1]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(pkg_parts[: len(pkg_parts) - (node.level - 1)])
                target = base + (node.module.split(".") if node.module else [])
                if target:
                    out.add(target[0])
                elif node.module is None:
                    out |= {a.name for a in node.names}
            elif node.module and node.module.startswith("annotator."):
                out.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            out |= {a.name.split(".")[1] for a in node.names if a.name.startswith("annotator.")}
    return out


def _files(sub: str | None = None):
    root = PKG / sub if sub else PKG
    return sorted(root.rglob("*.py"))


def test_only_ui_imports_pyside6():
    bad = [
        str(p.relative_to(PKG))
        for p in _files()
        if "PySide6" in _imports(p) and p.relative_to(PKG).parts[0] != "ui"
    ]
    assert bad == []


def test_only_store_imports_sqlalchemy_or_alembic():
    bad = [
        str(p.relative_to(PKG))
        for p in _files()
        if _imports(p) & {"sqlalchemy", "alembic"} and p.relative_to(PKG).parts[0] != "store"
    ]
    assert bad == []


def test_domain_is_standard_library_only():
    import sys

    for p in _files("domain"):
        third_party = {
            m for m in _imports(p) if m not in sys.stdlib_module_names and m != "__future__"
        }
        assert not third_party, f"{p.name} imports {third_party}"
        assert not (_imports(p) & {"sqlite3", "socket"}), p.name


def test_base_is_standard_library_only():
    """base/ is the bottom layer every package may use: plumbing (atomic writes), no third party."""
    import sys

    for p in _files("base"):
        third_party = {
            m for m in _imports(p) if m not in sys.stdlib_module_names and m != "__future__"
        }
        assert not third_party, f"{p.name} imports {third_party}"


def test_stats_does_no_io():
    allowed = {"numpy", "pandas", "scipy", "krippendorff"}
    import sys

    for p in _files("stats"):
        mods = _imports(p)
        assert not (mods & IO_MODULES), f"{p.name} imports {mods & IO_MODULES}"
        third = {
            m
            for m in mods
            if m not in sys.stdlib_module_names and m not in ("__future__", "annotator")
        }
        assert third <= allowed, f"{p.name} imports {third - allowed}"


RULES = {
    "base": set(),
    "domain": set(),
    "stats": {"domain"},
    "store": {"domain", "base"},
    "ingest": {"domain", "base"},
    "judge": {"domain", "base"},
    "reports": {"domain", "base"},
    "demo": {"domain", "base"},
    "services": {"store", "ingest", "stats", "judge", "reports", "demo", "domain", "base"},
    "ui": {"services", "domain", "base"},
    "cli": {"services", "domain", "ui", "base"},
}


def test_package_direction():
    """ui/cli -> services -> store, ingest, stats, judge, reports, demo -> domain; base (file
    plumbing) under all but domain and stats, which do no I/O; no exceptions."""
    for sub, allowed in RULES.items():
        files = [PKG / "cli.py"] if sub == "cli" else _files(sub)
        for p in files:
            targets = _relative_targets(p) - {sub}
            assert targets <= allowed, f"{p.relative_to(PKG)} imports {targets - allowed}"


def test_every_module_is_under_a_rule():
    top = {p.relative_to(PKG).parts[0].removesuffix(".py") for p in _files()}
    assert top - set(RULES) <= {"__init__", "__main__"}, (
        f"modules without a layering rule: {top - set(RULES)}"
    )


def test_the_lead_views_load_no_statistics_on_the_ui_thread():
    """Opening the dashboard or the review view imports their modules on the UI thread: pandas
    and scipy (a second and more) come with the first report or queue, on a worker thread, not
    with the import (numpy is the image decoder's, and light)."""
    import subprocess
    import sys

    code = (
        "import sys, annotator.ui.dashboard_view, annotator.ui.review_view;"
        "print(sorted(m for m in ('pandas', 'scipy') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=PKG.parent
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
