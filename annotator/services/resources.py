"""What ships inside the package: the rubrics and anchor sets (importlib.resources).

They live at the top of the repository (`rubrics/`, `anchors/`) and install as
`annotator.rubrics` / `annotator.anchors`, so `pip install .` (not only `-e`)
and a frozen build find them the same way.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

from ..domain.errors import InputError


def shipped_rubrics() -> list[str]:
    """Ids of the shipped rubrics (file stems), sorted."""
    return sorted(
        p.name.removesuffix(".toml")
        for p in resources.files("annotator.rubrics").iterdir()
        if p.name.endswith(".toml")
    )


def rubric_text(name: str) -> str:
    f = resources.files("annotator.rubrics").joinpath(f"{name}.toml")
    if not f.is_file():
        raise InputError(
            f"no shipped rubric '{name}'; shipped: {', '.join(shipped_rubrics())}, "
            "or give the path of a .toml file",
            field="--rubric",
        )
    return f.read_text(encoding="utf-8")


def resolve_rubric(given: str | Path) -> Path | str:
    """A path that exists as given, else the name of a shipped rubric (returned as is)."""
    p = Path(given)
    if p.exists() or p.suffix == ".toml" or len(p.parts) > 1:
        return p
    rubric_text(str(given))  # one line if it is not shipped either
    return str(given)


@contextmanager
def anchor_set(name: str) -> Iterator[Path]:
    """A real path to a shipped anchor set's anchors.jsonl (its images beside it)."""
    folder = resources.files("annotator.anchors").joinpath(name)
    if not folder.joinpath("anchors.jsonl").is_file():
        raise InputError(f"no shipped anchor set '{name}'", field="anchors")
    with resources.as_file(folder) as real:
        yield Path(real) / "anchors.jsonl"


def shipped_rubrics_folder() -> Path | None:
    """The folder holding the shipped rubric files when they are plain files on disk (a source
    checkout, an installed wheel, a frozen bundle), for a file dialog to start in; else None."""
    folder = resources.files("annotator.rubrics")
    try:
        real = Path(str(folder))
    except TypeError:  # pragma: no cover - a zip import: nothing to browse
        return None
    return real if real.is_dir() else None


def shipped_rubric(rubric_id: str) -> str | None:
    """The text of the shipped rubric with this id, or None."""
    f = resources.files("annotator.rubrics").joinpath(f"{rubric_id}.toml")
    return f.read_text(encoding="utf-8") if f.is_file() else None
