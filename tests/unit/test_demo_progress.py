"""The demo build's terminal progress: one line redrawn in place on a terminal,
a handful of plain lines on a pipe or log, never a line per answer."""

from __future__ import annotations

import io

from annotator.base.task import TaskState
from annotator.cli import DemoProgress
from annotator.services.demo import STAGES


def _run(bar: DemoProgress) -> None:
    task = TaskState(bar)  # as `annotator demo` hands it to the build
    for n in range(1, 37):
        task.count(n, 36, STAGES[0])
    for n in range(1, 301):
        task.count(n, 300, STAGES[1])
    for n in range(1, 201):
        task.count(n, 200, STAGES[2])
    for n in range(1, 101):
        task.count(n, 100, STAGES[3])
    task.count(0, 1, STAGES[4])
    task.count(1, 1, STAGES[4])
    bar.end()


def test_on_a_terminal_one_line_is_redrawn_and_ends_full():
    stream = io.StringIO()
    _run(DemoProgress(STAGES, stream, tty=True))
    text = stream.getvalue()
    assert text.count("\n") == 1 and text.endswith("\n")  # one line, closed once at the end
    frames = text.rstrip("\n").split("\r")[1:]
    assert len(frames) == 36 + 300 + 200 + 100 + 2
    assert all(len(f) == 78 for f in frames)  # padded: a shorter frame leaves no old text
    shares = [f.split("[")[1].split("]")[0].count("#") for f in frames]
    assert shares == sorted(shares) and shares[0] < 3 and shares[-1] == DemoProgress.WIDTH
    assert "2/5 rater answers 150/300" in frames[36 + 149]


def test_elsewhere_a_few_plain_lines_per_stage():
    stream = io.StringIO()
    _run(DemoProgress(STAGES, stream, tty=False))
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue()
    assert 4 <= len(lines) <= 5 * len(STAGES)
    for stage in STAGES:
        assert any(f" {stage} " in ln for ln in lines)
    assert lines[-1].endswith("lead's decisions 1/1")


def test_counts_take_the_right_number():
    """A count of one takes the singular ("1 session", not "1 sessions"): the CLI's lines are
    read as English."""
    from annotator.domain.text import counted

    assert counted(1, "session") == "1 session" and counted(2, "session") == "2 sessions"
    assert counted(0, "rater") == "0 raters" and counted(1, "entry", "entries") == "1 entry"
