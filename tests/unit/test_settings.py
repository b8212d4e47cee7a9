"""A study's settings are one table (annotator/domain/settings.py SETTINGS): each key's default,
check and doc. `check_setting` looks the check up and refuses in one line naming the key; a key
the table does not declare is refused with the known ones; annotator's own records are not set by
hand; and annotator/ reads no key the table does not declare and keeps no default of its own."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest

from annotator.cli import main
from annotator.domain.errors import InputError
from annotator.domain.settings import DEFAULT_SETTINGS, RATER_SETTINGS, RECORDS, SETTINGS
from annotator.services.study import Study, check_setting
from annotator.store.assignments import claim_expiry_minutes

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "annotator"


def test_the_table_is_whole() -> None:
    """Each default fits its own check, each doc is one line, DEFAULT_SETTINGS is the table's
    defaults, and a rater's settings are all declared (as settings or as records)."""
    assert DEFAULT_SETTINGS == {k: s.default for k, s in SETTINGS.items()}
    for key, spec in SETTINGS.items():
        assert spec.check(spec.default) is None, key
        check_setting(key, spec.default)
        assert spec.doc.strip() and "\n" not in spec.doc, key
    assert not set(SETTINGS) & set(RECORDS)
    assert set(RATER_SETTINGS) <= set(SETTINGS) | set(RECORDS)


def _refusal(key: str, value: Any) -> str:
    with pytest.raises(InputError) as e:
        check_setting(key, value)
    line = str(e.value)
    assert "\n" not in line and f"'{key}'" in line, line
    return line


def test_an_unknown_key_is_refused_with_the_known_ones() -> None:
    line = _refusal("anchors_every", 3)
    assert "unknown setting 'anchors_every'" in line
    assert all(k in line for k in SETTINGS)
    assert not any(k in line for k in RECORDS if k not in ("name", "role"))


def test_the_cli_refuses_an_unknown_key_before_opening_the_study(capsys) -> None:
    assert main(["set", "anchors_every", "3", "--study", "/nonexistent/study"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "unknown setting 'anchors_every'" in err
    assert "certified_fdr_q" in err


def test_a_record_is_not_set_by_hand(tmp_path, rubric_path) -> None:
    """`study_id`, the on-demand deal, the human sample... are written by the command that does
    what they record; `set_setting` refuses them and the stored value stays."""
    study = Study.create(tmp_path / "s", rubric_path)
    try:
        before = study.setting("study_id")
        assert before
        line = ""
        with pytest.raises(InputError) as e:
            study.set_setting("study_id", "another")
        line = str(e.value)
        assert "'study_id'" in line and "kept by annotator itself" in line
        assert "anchor_every" in line  # what can be set instead
        with pytest.raises(InputError, match="deal_on_demand"):
            study.set_setting("deal_on_demand", 2)
        assert study.setting("study_id") == before
        assert study.db.get_setting("deal_on_demand") is None
    finally:
        study.close()


# keys whose checks no other test file exercised: (key, refused values, accepted values)
CHECKS: list[tuple[str, list[Any], list[Any]]] = [
    ("anchor_every", [1, -1, 2.0, True, "15", None], [0, 2, 15]),
    ("min_count_for_share", [0, -3, 1.5, True, None], [1, 10]),
    ("pair_raters_per_pair", [0, 2.5, False, "3"], [1, 3]),
    ("release_gate_min_cases", [0, True, 5.0], [1, 5]),
    ("claim_expiry_minutes", [0, -1, True, "30", None], [0.5, 30, 60]),
    ("debiased_plan_width", [0, -0.1, False, None], [0.02, 0.1, 2]),
    ("pair_question", ["", "   ", 3, None], ["Which is better?"]),
    # a share of true is no share (JSON's true arrives as an int)
    ("qualification", [{"gate_exact": True}, {"gate_exact": 1.2}, [0.9], None], [{}, {"a": 1}]),
    ("certified_scale_tolerance", [-0.5, True, "1"], [0, 1, 0.5]),
    ("certified_alpha", [0, 1, 1.5, True], [0.05, 0.5]),
]


@pytest.mark.parametrize(("key", "bad", "good"), CHECKS, ids=[c[0] for c in CHECKS])
def test_a_check_refuses_in_one_line_and_accepts(key: str, bad: list[Any], good: list[Any]) -> None:
    for value in bad:
        assert f"setting '{key}' must be " in _refusal(key, value), (key, value)
    for value in good:
        check_setting(key, value)


def test_a_finite_number_is_asked_for_by_name() -> None:
    assert "finite" in _refusal("claim_expiry_minutes", float("inf"))
    assert "finite" in _refusal("qualification", {"gate_exact": float("nan")})


def test_a_stored_null_reads_as_the_default(tmp_path, rubric_path) -> None:
    """A null stored for a setting reads as the table's default everywhere: the study's reads
    and the store's read of the claim expiry (which crashed on it)."""
    study = Study.create(tmp_path / "s", rubric_path)
    try:
        study.db.set_setting("pair_raters_per_pair", None)
        study.db.set_setting("claim_expiry_minutes", None)
        assert study.setting("pair_raters_per_pair") == 3
        with study.db.read() as s:
            assert claim_expiry_minutes(s) == 30.0
        study.set_setting("claim_expiry_minutes", 45)
        with study.db.read() as s:
            assert claim_expiry_minutes(s) == 45.0
    finally:
        study.close()


# -- the code reads only declared keys, and keeps no default of its own ------------------------


def key(n: int = 0) -> str:
    """A key as a literal or as a module constant (groups numbered: a pattern may hold two)."""
    return rf'(?:"(?P<lit{n}>\w+)"|(?P<const{n}>[A-Z][A-Z0-9_]+))'


# reads of the study's settings table, whichever layer: domain's setting(), Study/Snapshot
# .setting(), the store's get_setting and its Setting rows, and the table's own defaults
READS = [
    re.compile(rf"\bsetting\(\s*[\w.]+(?:\(\))?\s*,\s*{key()}\s*\)"),
    re.compile(rf"\.setting\(\s*{key()}\s*\)"),
    re.compile(rf"\bget_setting\(\s*{key()}"),
    re.compile(rf"\bSetting\.key\s*==\s*{key()}"),
    re.compile(rf"\bDEFAULT_SETTINGS(?:\[\s*{key(0)}\s*\]|\.get\(\s*{key(1)})"),
]
# a settings mapping read by key: outside reports/ (which reads the report's JSON, whose
# sections carry their own "settings") and judge/ (a judge run's settings, another table)
MAPPING_READ = re.compile(rf"\bsettings(?:\.get\(\s*{key(0)}|\[\s*{key(1)}\s*\](?!\s*=[^=]))")
OWN_DEFAULT = re.compile(
    rf"(?:\.get\(\s*{key(0)}\s*,\s*(?!None\b)-?[\d\"'\[{{][^)]*\))"
    rf"|(?:setting\(\s*{key(1)}\s*\)\s*or\s+(?P<fallback>-?[\d.]+|\"[^\"]*\"))"
)


def _sources() -> dict[str, str]:
    return {
        p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(PACKAGE.rglob("*.py"))
        if p.relative_to(ROOT).as_posix() != "annotator/domain/settings.py"
    }


def _constants(sources: dict[str, str]) -> dict[str, set[str]]:
    """Module-level NAME = "text" of annotator/ (ON_DEMAND = "deal_on_demand"...): a key read
    through a constant is still a key."""
    out: dict[str, set[str]] = {}
    for text in sources.values():
        for node in ast.parse(text).body:
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id.isupper():
                        out.setdefault(target.id, set()).add(node.value.value)
    return out


def _keys(m: re.Match[str], constants: dict[str, set[str]]) -> set[str]:
    found = m.groupdict()
    lit = next((v for k, v in found.items() if k.startswith("lit") and v), None)
    const = next((v for k, v in found.items() if k.startswith("const") and v), None)
    if lit:
        return {lit}
    return constants.get(const or "", set())


def _reads(sources: dict[str, str]) -> list[tuple[str, int, str]]:
    constants = _constants(sources)
    found = []
    for path, text in sources.items():
        patterns = list(READS)
        if not path.startswith(("annotator/reports/", "annotator/judge/")):
            patterns.append(MAPPING_READ)
        for pattern in patterns:
            for m in pattern.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                found += [(path, line, key) for key in _keys(m, constants)]
    return found


def test_every_key_read_is_declared() -> None:
    reads = _reads(_sources())
    assert len(reads) > 40, "the patterns no longer find the code's reads of settings"
    declared = set(SETTINGS) | set(RECORDS)
    undeclared = sorted({f"{p}:{n} '{k}'" for p, n, k in reads if k not in declared})
    assert not undeclared, f"settings read that domain/settings.py does not declare: {undeclared}"
    assert set(SETTINGS) <= {k for _, _, k in reads}, "a declared setting nothing reads"


def test_no_module_keeps_a_default_of_its_own() -> None:
    """`.get("key", <literal>)` or `setting("key") or <the default>` for a declared setting is a
    copy of its default that a changed table would leave behind."""
    sources = _sources()
    constants = _constants(sources)
    copies = []
    for path, text in sources.items():
        for m in OWN_DEFAULT.finditer(text):
            for key in _keys(m, constants) & set(SETTINGS):
                fallback = m.group("fallback")
                if fallback is not None and json.loads(fallback) != SETTINGS[key].default:
                    continue  # `or 0` where null means off: not the default, a meaning
                copies.append(f"{path}:{text.count(chr(10), 0, m.start()) + 1} '{key}'")
    assert not copies, f"own defaults of settings (read them from the table): {copies}"


def test_the_patterns_find_a_copy_and_an_undeclared_key() -> None:
    """The two tests above fail on what they look for (the code before the table had both)."""
    text = (
        'n = int(study.setting("pair_raters_per_pair") or 3)\nx = s.get("certified_alpha", 0.1)\n'
    )
    keys = [sorted(_keys(m, {})) for m in OWN_DEFAULT.finditer(text)]
    assert keys == [["pair_raters_per_pair"], ["certified_alpha"]]
    reads = _reads({"annotator/x.py": 'setting(frames.settings, "no_such_key")\n'})
    assert reads == [("annotator/x.py", 1, "no_such_key")]
