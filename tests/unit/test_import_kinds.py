"""The import table (services/import_kinds.py) and what is derived from it or checked against it:
the run functions of services/importers.py, the Study methods the formats name, and the tools
read through a mapping (services/interop.py READERS and their ingest/ modules)."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest

from annotator.services import importers, interop
from annotator.services.import_kinds import KINDS, MAPPING, OPTIONS, TOOLS, ImportKind
from annotator.services.study import Study

ROOT = Path(__file__).resolve().parents[2]


def test_every_format_says_what_reads_it():
    for kind in KINDS.values():
        assert kind.reader == MAPPING or kind.reader.startswith("import_"), kind.name
        assert set(kind.options) <= set(OPTIONS), kind.name
        if kind.reader != MAPPING:
            assert callable(getattr(Study, kind.reader)), kind.name


def test_the_mapping_tools_are_the_tables_and_each_has_its_reader_module():
    assert TOOLS == ("label-studio", "potato", "prodigy")
    assert tuple(interop.READERS) == TOOLS
    for tool in TOOLS:
        module = importlib.import_module(f"annotator.ingest.{tool.replace('-', '_')}")
        assert interop.READERS[tool] is module
        # what services/interop.py calls on each reader
        assert callable(module.parse) and callable(module.initial)
        assert "--map" in {OPTIONS[o].flag for o in KINDS[tool].options}


def test_the_tool_list_is_kept_once():
    # the mapping module read the tool names from no table; the import table is the one list
    import annotator.ingest.mapping as mapping

    assert not hasattr(mapping, "TOOLS")
    text = (ROOT / "annotator" / "services" / "interop.py").read_text()
    assert '"potato": potato' not in text


def test_each_run_takes_exactly_its_formats_options():
    for name, imp in importers.IMPORTERS.items():
        keywords = list(inspect.signature(imp.run).parameters)[2:]
        assert set(keywords) == set(KINDS[name].options), name


def _run(study, path, cases=None):
    return ""


def test_tables_that_disagree_are_refused():
    good = ImportKind("x", "x", ("cases",), reader="import_items")
    importers.check_tables({"x": good}, {"x": _run})
    with pytest.raises(RuntimeError, match="in one table only"):
        importers.check_tables({"x": good}, {"x": _run, "y": _run})
    with pytest.raises(RuntimeError, match=r"run takes \['cases'\], the table says \[\]"):
        importers.check_tables({"x": ImportKind("x", "x", reader="import_items")}, {"x": _run})
    with pytest.raises(RuntimeError, match="no Study.import_nothing"):
        importers.check_tables(
            {"x": ImportKind("x", "x", ("cases",), reader="import_nothing")}, {"x": _run}
        )
    with pytest.raises(RuntimeError, match="no Study.<reader>"):
        importers.check_tables({"x": ImportKind("x", "x", ("cases",))}, {"x": _run})


def test_the_import_tables_say_who_reads_them_truly():
    """The CLI reads the import table; the app does not (it imports through its own views), so
    neither module may say it does."""
    ui = ROOT / "annotator" / "ui"
    readers = [
        p.name
        for p in ui.rglob("*.py")
        if "import_kinds" in p.read_text(encoding="utf-8")
        or "importers" in p.read_text(encoding="utf-8")
    ]
    if not readers:
        for name in ("import_kinds.py", "importers.py"):
            text = (ROOT / "annotator" / "services" / name).read_text(encoding="utf-8")
            assert "the app" not in text and "app's menu" not in text, name
