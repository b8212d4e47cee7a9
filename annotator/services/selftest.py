"""`annotator --selftest`, the checks that need no window: what ships, the migrations, the
statistics. Each check is one line ("ok NAME: detail" or "FAIL NAME: why"); the frozen build
runs the same checks (its data files, its compiled statistics libraries), so a bundle that
lost a file or a library says so before a rater meets it.

Public API: ``Check(name, ok, detail)``, ``checks() -> Iterator[Check]``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

# Krippendorff (2011), coders x units, NaN = missing: alpha (nominal) 0.743 as published there;
# percent agreement 0.8181818, Fleiss' kappa 0.76117 and Gwet's AC1 0.77544 as published by
# R irrCAC (Gwet 2014) for the same matrix.
_N = float("nan")
KRIPP = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, _N, _N, _N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, _N, 3],
    [_N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, _N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, _N],
]
KNOWN = {
    "alpha": 0.743,
    "percent_agreement": 0.8181818,
    "fleiss_kappa": 0.76117,
    "gwet_ac1": 0.77544,
    "cohen_kappa": 0.5,
}


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str

    def line(self) -> str:
        return f"{'ok  ' if self.ok else 'FAIL'} {self.name}: {self.detail}"


def _run(name: str, fn: Callable[[], str]) -> Check:
    try:
        return Check(name, True, fn())
    except Exception as exc:  # noqa: BLE001 - every failure is one line of the report
        return Check(name, False, f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}")


def _resources() -> str:
    from ..domain.rubric import parse_rubric
    from .resources import anchor_set, rubric_text, shipped_rubrics

    ids = shipped_rubrics()
    if len(ids) < 4:
        raise RuntimeError(f"only {len(ids)} shipped rubrics: {', '.join(ids)}")
    langs = set()
    for rid in ids:
        langs |= set(parse_rubric(rubric_text(rid), source=rid).languages())
    with anchor_set("ui_mockup") as path:
        n = sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
        images = len(list((path.parent / "images").glob("*.png")))
    if not n or not images:
        raise RuntimeError("the shipped anchor set is empty")
    return f"{len(ids)} rubrics ({', '.join(sorted(langs)) or 'no'} translations), anchor set of {n} with {images} images"


def _migrations() -> str:
    from ..store.engine import current_revision, head_revision, known_revisions
    from .study import Study

    with tempfile.TemporaryDirectory(prefix="annotator-selftest-") as tmp:
        study = Study.create(
            Path(tmp) / "study", "ui_mockup"
        )  # every migration, from an empty file
        try:
            now = current_revision(study.db.engine)
            study.add_rater("selftest")
            raters = [r.name for r in study.raters()]
        finally:
            study.close()
        reopened = Study.open(Path(tmp) / "study")  # and the checks a study gets on opening
        reopened.close()
    if now != head_revision() or raters != ["selftest"]:
        raise RuntimeError(f"the new study is at {now}, not {head_revision()}")
    return f"{len(known_revisions())} migrations to {now} on a new study"


def _statistics() -> str:
    import numpy as np

    from ..stats.agreement import krippendorff_alpha, value_counts_from_matrix
    from ..stats.kappa import agreement_summary, cohen_kappa

    data = np.array(KRIPP, dtype=float)
    got = {"alpha": krippendorff_alpha(data, level="nominal", n_boot=50, seed=0)["estimate"]}
    s = agreement_summary(value_counts_from_matrix(data), 5, n_boot=50)
    got |= {k: s[k]["estimate"] for k in ("percent_agreement", "fleiss_kappa", "gwet_ac1")}
    got["cohen_kappa"] = cohen_kappa([1, 1, 1, 2, 2, 2, 1, 2], [1, 1, 2, 2, 2, 1, 1, 2], n_boot=50)[
        "unweighted"
    ]["estimate"]
    wrong = [
        f"{k} {got[k]:.5f} (expected {v})"
        for k, v in KNOWN.items()
        if got[k] is None or abs(got[k] - v) > 5e-4
    ]
    if wrong:
        raise RuntimeError("; ".join(wrong))
    return ", ".join(f"{k} {got[k]:.4f}" for k in KNOWN)


def checks() -> Iterator[Check]:
    yield _run("resources", _resources)
    yield _run("migrations", _migrations)
    yield _run("statistics", _statistics)
