"""The docs match the code: the README is a tour under 250 lines whose first
two commands are the ones CI runs, every relative link of the docs resolves, and the "Where a
change starts" table of docs/architecture.md is held to the code: each path it names exists, it
names the one registry of each extensible thing, and everything registered there is found in
each place the table says (so a kind, import format, report section or setting registered in one
place only fails here). The walk of one answer names functions that exist where it says."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from annotator.cli import build_parser
from annotator.domain.errors import InputError
from annotator.domain.kinds import KINDS as METRIC_KINDS
from annotator.domain.settings import DEFAULT_SETTINGS, SETTINGS
from annotator.services import importers
from annotator.services.import_kinds import KINDS as IMPORT_KINDS
from annotator.services.study import check_setting
from annotator.ui.metric_rows import ROWS

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
DOCS = [README, ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def _prose(text: str) -> str:
    """The text outside fenced code blocks (a `[x](y)` in code is not a link)."""
    return FENCE.sub("", text)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    return {
        _slug(m.group(1))
        for m in re.finditer(r"^#{1,6} (.+)$", _prose(path.read_text(encoding="utf-8")), re.M)
    }


def _section(text: str, heading: str) -> str:
    """The text under a heading, up to the next heading of its level or above."""
    m = re.search(rf"^(#+) {re.escape(heading)}\n", text, re.M)
    assert m, f"no section '{heading}'"
    body = text[m.end() :]
    end = re.search(rf"^#{{1,{len(m.group(1))}}} ", body, re.M)
    return body[: end.start()] if end else body


def test_readme_is_a_tour_under_250_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) < 250, f"README.md has {len(lines)} lines: move detail into docs/"


def test_readme_first_two_commands_are_install_run_and_test() -> None:
    text = README.read_text(encoding="utf-8")
    block = re.search(r"^```bash\n(.*?)^```", text, re.S | re.M)
    assert block, "README.md: no bash block"
    first_two = [line.split("#")[0].strip() for line in block.group(1).splitlines()[:2]]
    assert first_two == [
        "sh packaging/display-libs.sh && pip install -e . && annotator demo",
        'pip install -e ".[test]" && python -m pytest --all -n 2 --dist loadfile',
    ]
    # CI runs the test command verbatim (.ci/run says so): the two must not drift apart
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert first_two[1] in ci


def test_the_display_libraries_script_installs_what_the_preflight_looks_for() -> None:
    """packaging/apt-packages.txt (what the README's first command installs, and CI) names the
    packages of every library the app's preflight checks, and nothing else."""
    from annotator.ui.app import XCB_LIBRARIES

    listed = (ROOT / "packaging" / "apt-packages.txt").read_text(encoding="utf-8").split()
    assert sorted(listed) == sorted(set(XCB_LIBRARIES.values()))
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "packaging/apt-packages.txt" in ci


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(doc: Path) -> None:
    bad = []
    for target in LINK.findall(_prose(doc.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (doc.parent / path).resolve() if path else doc
        if not dest.exists():
            bad.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            bad.append(f"{target}: no heading '#{anchor}' in {dest.relative_to(ROOT)}")
    assert not bad, f"{doc.relative_to(ROOT)}: " + "; ".join(bad)


def _change_table() -> dict[str, str]:
    """The rows of "Where a change starts": {what to add: the rest of the row}."""
    section = _section(ARCHITECTURE.read_text(encoding="utf-8"), "Where a change starts")
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 3 and not set(cells[0]) <= {"-"}:
            rows[cells[0]] = " | ".join(cells[1:])
    rows.pop("to add", None)
    return rows


def test_change_table_paths_exist() -> None:
    rows = _change_table()
    assert rows, "docs/architecture.md: no 'Where a change starts' table"
    missing = []
    for row in rows.values():
        for token in re.findall(r"`([^`]+)`", row):
            if "/" in token and token.split("/")[0] in ("annotator", "tests", "docs"):
                if not list(ROOT.glob(token)):
                    missing.append(token)
    assert not missing, f"docs/architecture.md names files that do not exist: {missing}"


def test_change_table_names_each_registry() -> None:
    rows = _change_table()
    expected = {
        "a metric kind": [
            "`annotator/domain/kinds.py`",
            "`KINDS`",
            "`annotator/ui/metric_rows.py`",
        ],
        "an import format": ["`annotator/services/import_kinds.py`", "`_RUNS`"],
        "a report statistic": ["`annotator/stats/report_model.py`", "`annotator/reports/`"],
        "a study setting": [
            "`annotator/domain/settings.py`",
            "`SETTINGS`",
            "`annotator/services/study.py`",
        ],
    }
    for what, names in expected.items():
        assert what in rows, f"docs/architecture.md: no row '{what}'"
        for name in names:
            assert name in rows[what], f"docs/architecture.md, row '{what}': {name} not named"


def test_every_metric_kind_has_its_row_class() -> None:
    """A kind in domain/kinds.KINDS without its row class in ui/metric_rows.ROWS (or the reverse)."""
    assert set(ROWS) == set(METRIC_KINDS)


# Every place a change of each row touches, found from the code by the tests below; the row of
# "Where a change starts" must name each (a place the code needs but the table forgets fails).
PLACES = {
    "a metric kind": [
        "`annotator/domain/kinds.py`",
        "`server_check`",
        "`annotator/ui/metric_rows.py`",
        "`annotator/demo/simulate.py`",
        "`annotator/domain/rubric.py`",
        "`METRIC_TEXTS`",
    ],
    "an import format": [
        "`annotator/ingest/`",
        "`annotator/services/import_kinds.py`",
        "`annotator/services/importers.py`",
        "`_RUNS`",
        "`reader`",
        "`annotator/services/study.py`",
        "`annotator/services/interop.py`",
    ],
    "a report statistic": [
        "`annotator/stats/report_model.py`",
        "`annotator/reports/view_*.py`",
        "`annotator/reports/section_*.py`",
        "`SECTIONS`",
        "`annotator/reports/report_sections.py`",
        "`annotator/reports/templates/_section.html.j2`",
        "`section_tables`",
    ],
}


def test_change_table_names_every_place_a_change_touches() -> None:
    rows = _change_table()
    forgotten = [
        f"{what}: {p}" for what, places in PLACES.items() for p in places if p not in rows[what]
    ]
    assert not forgotten, f"docs/architecture.md 'Where a change starts' misses {forgotten}"


def test_every_report_section_is_a_view_and_a_section_builder() -> None:
    """Each entry of reports/report_sections.SECTIONS is what the row "a report statistic" says:
    a view in reports/view_*.py and a Section builder in reports/section_*.py."""
    from annotator.reports.report_sections import SECTIONS

    for s in SECTIONS:
        assert s.view.__module__.startswith("annotator.reports.view_"), s.key
        assert s.build.__module__.startswith("annotator.reports.section_"), s.key
        # its charts are drawn beside its view, never in the builder (the CSV draws none)
        assert s.draw is None or s.draw.__module__.startswith("annotator.reports.view_"), s.key


def test_every_metric_kind_is_checked_by_the_team_server() -> None:
    """The trigger (store/roles.py) is built from each kind's server_check: a kind without one
    could not be served, and one without its branch would be refused whole on a server."""
    from annotator.store import roles

    checks = roles._value_checks()  # noqa: SLF001 - the trigger's text, built from the kinds
    for name, spec in METRIC_KINDS.items():
        cond, message = spec.server_check()
        assert cond and "%" in message, name
        assert f"t = '{name}' THEN" in checks and cond in checks, name


def test_every_judged_metric_kind_is_simulated() -> None:
    """The demo's simulated raters answer every judged kind (demo/simulate.py `_answer_by_kind`:
    a kind missing there stops the demo with a KeyError)."""
    from annotator.demo.simulate import SimulatedRater

    judged = {n for n, k in METRIC_KINDS.items() if k.judged}
    assert judged == set(SimulatedRater._answer_by_kind), "demo/simulate.py _answer_by_kind"  # noqa: SLF001


# The kinds' rubric fields that hold settings, not text a rater reads (nothing to translate).
NOT_SHOWN = {"min", "max", "step", "judge_scale"}


def test_every_shown_field_of_a_kind_is_translated() -> None:
    """A kind's rubric field a rater reads (levels, points, options) takes a translation
    (`options_es`): domain/rubric.py METRIC_TEXTS, its `_LANG_RE` and a branch of
    `_parse_texts` for each. A new field is either a setting (add it to NOT_SHOWN) or
    text to translate (add it there)."""
    from annotator.domain import rubric

    fields = {f for k in METRIC_KINDS.values() for f in k.fields}
    shown = fields - NOT_SHOWN
    assert shown <= set(rubric.METRIC_TEXTS), sorted(shown - set(rubric.METRIC_TEXTS))
    source = (ROOT / "annotator" / "domain" / "rubric.py").read_text(encoding="utf-8")
    for name in shown:
        assert name in rubric._LANG_RE.pattern  # noqa: SLF001
        assert f'name == "{name}"' in source or f"else:  # {name}" in source, name


def test_every_import_format_is_run_offered_and_documented() -> None:
    runs = importers._RUNS  # noqa: SLF001 - the table this test holds to import_kinds.KINDS
    assert set(runs) == set(IMPORT_KINDS)
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")  # noqa: SLF001
    kind = next(a for a in sub.choices["import"]._actions if a.dest == "kind")  # noqa: SLF001
    assert set(kind.choices) == set(IMPORT_KINDS)
    text = "\n".join(p.read_text(encoding="utf-8") for p in DOCS)
    undocumented = [k for k in IMPORT_KINDS if f"annotator import {k} " not in text]
    assert not undocumented, (
        f"no `annotator import NAME` line in README.md or docs/: {undocumented}"
    )


def _report_keys() -> list[str]:
    """The top-level keys build_report puts in the report (its `report = {...}` and
    `report["..."] = ...` statements)."""
    tree = ast.parse((ROOT / "annotator" / "stats" / "report_model.py").read_text("utf-8"))
    build = next(
        n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "build_report"
    )
    keys: list[str] = []
    for node in ast.walk(build):
        if isinstance(node, ast.Assign):
            target = node.targets[0]
            if isinstance(target, ast.Name) and target.id == "report":
                assert isinstance(node.value, ast.Dict)
                keys += [k.value for k in node.value.keys if isinstance(k, ast.Constant)]
            elif (
                isinstance(target, ast.Subscript)
                and isinstance(target.value, ast.Name)
                and target.value.id == "report"
                and isinstance(target.slice, ast.Constant)
            ):
                keys.append(target.slice.value)
    return keys


def test_every_report_section_is_rendered() -> None:
    """A statistic placed in the report by stats/report_model.py is read by reports/ (JSON alone
    is not a rendering: the HTML view or the CSV tables must name it)."""
    keys = _report_keys()
    assert {"metrics", "findings", "summary", "debiased"} <= set(keys)
    reports = ROOT / "annotator" / "reports"
    rendering = "\n".join(
        p.read_text(encoding="utf-8")
        for p in sorted(reports.rglob("*"))
        if p.is_file() and p.suffix in (".py", ".j2") and p.name != "json_report.py"
    )
    unread = [k for k in keys if not re.search(rf"[\"'.]{k}\b", rendering)]
    assert not unread, f"report sections no file under annotator/reports/ renders: {unread}"


SETTING_ROW = re.compile(r"^\| `(\w+)` \| `(.+?)` \| (.+?) \|$", re.M)


def test_the_settings_table_of_the_docs_is_the_code_s() -> None:
    """docs/statistics.md "Settings of a study" lists every setting of domain/settings.py with
    its default and its line, and no key the code no longer has."""
    section = _section(
        (ROOT / "docs" / "statistics.md").read_text(encoding="utf-8"), "Settings of a study"
    )
    rows = {key: (default, doc) for key, default, doc in SETTING_ROW.findall(section)}
    stale = sorted(set(rows) - set(SETTINGS))
    assert not stale, (
        f"docs/statistics.md 'Settings of a study' lists settings the code lacks: {stale}"
    )
    for key, spec in SETTINGS.items():
        assert key in rows, f"docs/statistics.md 'Settings of a study' has no row for `{key}`"
        default, doc = rows[key]
        assert json.loads(default) == spec.default, f"docs/statistics.md: `{key}`'s default"
        assert spec.doc in doc, f"docs/statistics.md: `{key}`'s line is not the code's doc"


def test_every_setting_is_checked_and_read() -> None:
    source = "\n".join(
        p.read_text(encoding="utf-8")
        for p in sorted((ROOT / "annotator").rglob("*.py"))
        if p.relative_to(ROOT).as_posix()
        not in ("annotator/services/study.py", "annotator/domain/settings.py")
    )
    for key, default in DEFAULT_SETTINGS.items():
        check_setting(key, default)  # every default fits its own check
        assert f'"{key}"' in source, f"setting '{key}' is read nowhere but where it is defined"


def test_check_setting_knows_every_setting() -> None:
    """check_setting refuses a wrong type for every setting (none is passed through unchecked)."""
    for key in DEFAULT_SETTINGS:
        with pytest.raises(InputError, match=key):
            check_setting(key, [["a list of lists fits no setting"]])


WALK_LINE = re.compile(r"^\s+(annotator/\S+\.py)\s+([A-Za-z_][\w.]*)", re.M)


def test_walk_of_one_answer_names_what_exists() -> None:
    walk = _section(ARCHITECTURE.read_text(encoding="utf-8"), "The walk of one answer")
    steps = WALK_LINE.findall(walk)
    assert len(steps) >= 15, "docs/architecture.md: the walk of one answer lost its steps"
    for path, dotted in steps:
        file = ROOT / path
        assert file.exists(), f"docs/architecture.md walk: no file {path}"
        tree = ast.parse(file.read_text(encoding="utf-8"))
        scope: list[ast.stmt] = tree.body
        for name in dotted.split("."):
            found = next((n for n in scope if _defines(n, name)), None)
            assert found is not None, f"docs/architecture.md walk: {dotted} is not in {path}"
            scope = found.body if isinstance(found, ast.ClassDef) else []


def _defines(node: ast.stmt, name: str) -> bool:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name == name
    if isinstance(node, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
    if isinstance(node, ast.AnnAssign):
        return isinstance(node.target, ast.Name) and node.target.id == name
    return False


def test_no_merge_leftover_is_tracked():
    """A resolved conflict's `.orig`/`.rej` copy was once committed beside docs/team.md, and read
    as a second, stale copy of the team guide."""
    import shutil
    import subprocess

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\n")
    leftovers = [f for f in tracked if f.endswith((".orig", ".rej", ".BACKUP", ".LOCAL"))]
    assert leftovers == [], f"merge leftovers tracked: {leftovers} (git rm them)"


def test_the_cache_map_names_what_exists() -> None:
    """Each cache of "The caches" is at the path it names and has the names the row gives."""
    section = _section(ARCHITECTURE.read_text(encoding="utf-8"), "The caches")
    rows = [
        line for line in section.splitlines() if line.startswith("| ") and "`annotator/" in line
    ]
    assert len(rows) == 4, "docs/architecture.md: the cache map has four rows"
    named = {
        "annotator/services/report_cache.py": ("code_version", "CACHE_DIR"),
        "annotator/services/frames_cache.py": ("def keep", "def load"),
        "annotator/services/dashboard.py": ("CACHE = ", "def clear"),
        "annotator/ui/decode.py": (
            "class ImagePrefetcher",
            "CAPACITY = 12",
            "MAX_BYTES = 96 << 20",
        ),
    }
    for row, (path, needles) in zip(rows, named.items(), strict=True):
        assert f"`{path}`" in row
        source = (ROOT / path).read_text(encoding="utf-8")
        for needle in needles:
            assert needle in source, f"{path}: {needle}"


def test_design_keeps_no_second_copy_of_the_layer_map() -> None:
    """docs/design.md points to architecture.md's map instead of repeating it (two copies drift)."""
    design = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    section = _section(design, "3. Layout and dependency rule")
    assert "annotator/\n" not in section and "architecture.md#what-is-where" in section


# The modules whose docstrings name their tests so far; the list only grows (as mypy's does).
NAMES_ITS_TESTS = (
    "annotator/base",
    "annotator/ingest",
    "annotator/cli.py",
    "annotator/services/exports.py",
    "annotator/services/import_kinds.py",
    "annotator/services/importers.py",
    "annotator/services/interop.py",
    "annotator/ui/dashboard_follow.py",
    "annotator/ui/dashboard_view.py",
    "annotator/ui/label_answers.py",
    "annotator/ui/label_layout.py",
    "annotator/ui/label_prefetch.py",
    "annotator/ui/section_widgets.py",
)
TESTED_IN = re.compile(r"Tested in (.+?)(?:\n\n|$)", re.S)


def _test_files_named(doc: str) -> list[str]:
    m = TESTED_IN.search(doc)
    if m is None:
        return []
    return re.findall(r"(?:tests/[\w/]+/)?test_\w+\.py", m.group(1))


def test_each_module_names_its_tests() -> None:
    """A newcomer finds a module's tests from its docstring: "Tested in tests/unit/test_x.py",
    each file named exists, and a test file of the module's own name is among them (a module
    without one says where it is tested instead)."""
    modules = [
        p
        for entry in NAMES_ITS_TESTS
        for p in ([ROOT / entry] if entry.endswith(".py") else sorted((ROOT / entry).glob("*.py")))
        if p.name != "__init__.py"
    ]
    faults = []
    for path in modules:
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        named = _test_files_named(doc)
        rel = path.relative_to(ROOT).as_posix()
        if not named:
            faults.append(f"{rel}: no 'Tested in ...'")
            continue
        for name in named:
            found = [ROOT / name] if "/" in name else list((ROOT / "tests").rglob(name))
            if not any(f.exists() for f in found):
                faults.append(f"{rel}: names {name}, which does not exist")
        same = f"test_{path.stem}.py"
        if list((ROOT / "tests").rglob(same)) and not any(n.endswith(same) for n in named):
            faults.append(f"{rel}: does not name {same}")
    assert not faults, "; ".join(faults)


# Modules that hold several concepts and are to be split (the list only shrinks; empty now: a
# long module that is not one piece says why at its top, or goes here).
TO_SPLIT: set[str] = set()


def test_every_long_module_says_why_it_is_one_piece() -> None:
    """A module over 500 lines says at its top why it is one piece ("(Over 500 lines on
    purpose: ...)"), or is on the list of modules to split, which holds only long ones."""
    faults = []
    for path in sorted((ROOT / "annotator").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        if text.count("\n") <= 500 or "/migrations/" in rel:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        if rel not in TO_SPLIT and "(Over 500 lines on purpose:" not in doc:
            faults.append(f"{rel}: over 500 lines and no '(Over 500 lines on purpose: ...)'")
    for rel in TO_SPLIT:
        path = ROOT / rel
        if not path.exists() or path.read_text(encoding="utf-8").count("\n") <= 500:
            faults.append(f"{rel}: split now, take it off TO_SPLIT")
    assert not faults, "; ".join(faults)
