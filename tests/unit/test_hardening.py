"""Faults and races (a full disk, a read-only study, a killed process, two windows): each ends
in one clear line with nothing lost, each test named after the failure it prevents."""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import sqlite3
import subprocess
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from factories import basic_rows, make_png, write_manifest
from PIL import Image

from annotator.cli import main
from annotator.domain.errors import InputError, StudyBusy
from annotator.services.labeling import LabelSession
from annotator.services.study import DB_NAME, Study
from annotator.store import imports

REPO = Path(__file__).resolve().parents[2]
RUBRIC = REPO / "rubrics" / "ui_mockup.toml"
ALL = {
    "instruction_following": "PASS",
    "layout_hierarchy": 4,
    "text_rendering": "PASS",
    "ui_affordance": 3,
    "failure_tags": [],
    "reason": "ok",
}


def _one_line(capsys, argv: list[str], needle: str) -> str:
    assert main(argv) == 2, argv
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    assert needle in err, err
    return err


def _count(folder: Path, table: str) -> int:
    with sqlite3.connect(folder / DB_NAME) as c:
        return c.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def _media_files(folder: Path) -> list[Path]:
    return sorted(p for p in (folder / "media").rglob("*") if p.is_file())


def _noise_png(path: Path, size: int = 256, seed: int = 0) -> Path:
    """Incompressible pixels, so a few of them fill a small disk."""
    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(rng.integers(0, 256, (size, size, 3), dtype=np.uint8)).save(path)
    return path


@contextmanager
def small_disk(tmp_path: Path, kib: int):
    """A real filesystem of `kib` KiB (tmpfs): writes past it fail with ENOSPC."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={kib}k", "tmpfs", str(mnt)], capture_output=True
    )
    if r.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({r.stderr.decode().strip()})")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@contextmanager
def immutable(*paths: Path):
    """Files and folders nobody (root included) can change: chattr +i."""
    done = []
    try:
        for p in paths:
            if subprocess.run(["chattr", "+i", str(p)], capture_output=True).returncode != 0:
                pytest.skip("chattr +i is not supported on this filesystem")
            done.append(p)
        yield
    finally:
        for p in reversed(done):
            subprocess.run(["chattr", "-i", str(p)], check=False)


# ---- data loss and integrity ------------------------------------------------------


def test_failed_import_keeps_shared_media(tmp_path, monkeypatch):
    """Import A writes an image, import B commits an item using the same file, A fails in its
    database phase: A may remove only files no committed row uses, so B's image stays."""
    folder = tmp_path / "st"
    Study.create(folder, RUBRIC).close()
    src = tmp_path / "src"
    shared = make_png(src / "shared.png", colour=(9, 99, 199))
    row = {"case_id": "c", "prompt": "p", "generator": "g", "images": ["shared.png"]}
    man_a = write_manifest(src, [{**row, "item_id": "a-1"}], "a.jsonl")
    man_b = write_manifest(src, [{**row, "item_id": "b-1", "generator": "h"}], "b.jsonl")
    a, b = Study.open(folder), Study.open(folder)
    real_put, real_import = a.media.put, imports.import_items
    state = {"b_done": False}

    def put_then_let_b_commit(img, tx=None):
        new = real_put(img, tx)
        if not state["b_done"]:
            state["b_done"] = True
            assert (
                b.import_items(man_b) == 1
            )  # B commits while A is between its media and its database phase
        return new

    def import_failing_for_a(s, specs, *args, **kw):
        if specs and specs[0].item_id == "a-1":
            raise InputError("A's database phase fails")
        return real_import(s, specs, *args, **kw)

    a.media.put = put_then_let_b_commit
    monkeypatch.setattr(imports, "import_items", import_failing_for_a)
    with pytest.raises(InputError, match="A's database phase"):
        a.import_items(man_a)
    a.close()
    with b.db.read():
        view = b.views_of(["b-1"])["b-1"]
    assert b.media.has(view.outputs[0]), "B's committed item lost its image"
    assert len(_media_files(folder)) == 1 and shared.exists()
    b.close()


def test_failed_import_removes_only_its_own_unshared_media(tmp_path, monkeypatch):
    folder = tmp_path / "st"
    study = Study.create(folder, RUBRIC)
    src = tmp_path / "src"
    study.import_items(write_manifest(src, basic_rows(src, n_cases=1)))
    before = _media_files(folder)
    make_png(src / "new.png", colour=(1, 2, 3))
    man = write_manifest(
        src,
        [
            {
                "item_id": "n",
                "case_id": "c",
                "prompt": "p",
                "generator": "g",
                "images": ["new.png", "out/gen-a_case0.png"],
            }
        ],
        "n.jsonl",
    )
    monkeypatch.setattr(
        imports, "import_items", lambda *a, **k: (_ for _ in ()).throw(InputError("boom"))
    )
    with pytest.raises(InputError):
        study.import_items(man)
    assert _media_files(folder) == before
    study.close()


def _harness_files(tmp_path: Path, reasons) -> tuple[Path, Path]:
    src = tmp_path / "h"
    make_png(src / "x.png")
    cases = write_manifest(src, [{"id": "case9", "prompt": "a login screen"}], "cases.jsonl")
    results = src / "results.json"
    results.write_text(
        json.dumps(
            [
                {
                    "test_id": "case9",
                    "model_label": "g1",
                    "artifact_paths": ["x.png"],
                    "scores": {"instruction_following": "PASS"},
                    "reasons": reasons,
                    "run_params": {"judge_model": "j1"},
                }
            ]
        )
    )
    return results, cases


def test_harness_import_is_one_transaction(tmp_path, capsys):
    """A clash among the judge scores leaves no new items and no new media behind."""
    folder = tmp_path / "st"
    Study.create(folder, RUBRIC).close()
    results, cases = _harness_files(tmp_path, {"instruction_following": "fine"})
    assert (
        main(["import", "harness", str(results), "--cases", str(cases), "--study", str(folder)])
        == 0
    )
    capsys.readouterr()
    n_items, media = _count(folder, "items"), _media_files(folder)
    make_png(results.parent / "y.png", colour=(1, 200, 3))
    first = json.loads(results.read_text())[0]
    # the same result again (its judge scores clash) plus a new one with a new image
    results.write_text(
        json.dumps([first, {**first, "model_label": "g2", "artifact_paths": ["y.png"]}])
    )
    _one_line(
        capsys,
        ["import", "harness", str(results), "--cases", str(cases), "--study", str(folder)],
        "judge scores are already in the study",
    )
    assert _count(folder, "items") == n_items and _media_files(folder) == media


def test_harness_dict_reason_is_one_line_and_lands_nothing(tmp_path, capsys):
    folder = tmp_path / "st"
    Study.create(folder, RUBRIC).close()
    results, cases = _harness_files(tmp_path, {"instruction_following": {"why": "nested"}})
    _one_line(
        capsys,
        ["import", "harness", str(results), "--cases", str(cases), "--study", str(folder)],
        "the reason for 'instruction_following' must be text",
    )
    assert _count(folder, "items") == 0 and _media_files(folder) == []


def test_full_disk_during_import_leaves_no_media_and_no_tmp(tmp_path, capsys):
    with small_disk(tmp_path, 1024) as disk:
        folder = disk / "st"
        Study.create(folder, RUBRIC).close()
        src = tmp_path / "src"
        rows = [
            {
                "item_id": f"i{n}",
                "case_id": "c",
                "prompt": "p",
                "generator": f"g{n}",
                "images": [str(_noise_png(src / f"n{n}.png", seed=n).name)],
            }
            for n in range(8)
        ]
        man = write_manifest(src, rows)
        err = _one_line(
            capsys, ["import", "items", str(man), "--study", str(folder)], "disk is full"
        )
        assert "nothing was" in err
        assert _media_files(folder) == [] and not list(folder.rglob("*.tmp"))
        assert _count(folder, "items") == 0


def test_new_on_a_full_disk_leaves_nothing_and_can_be_retried(tmp_path, capsys):
    with small_disk(tmp_path, 2048) as disk:
        filler = disk / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError:
            pass
        finally:
            os.close(fd)
        _one_line(capsys, ["new", str(disk / "st"), "--rubric", str(RUBRIC)], "disk")
        assert not (disk / "st").exists()
        filler.unlink()
        assert main(["new", str(disk / "st"), "--rubric", str(RUBRIC)]) == 0


def test_live_item_reimported_as_anchor_is_refused(tmp_path, capsys):
    folder = tmp_path / "st"
    Study.create(folder, RUBRIC).close()
    anchors = REPO / "anchors" / "ui_mockup" / "anchors.jsonl"
    first = json.loads(anchors.read_text().splitlines()[0])
    live = dict(first)
    live.pop("reference")
    live.pop("rationale")
    live["images"] = [str(anchors.parent / p) for p in live["images"]]
    man = tmp_path / "live.jsonl"
    man.write_text(json.dumps(live) + "\n")
    # the manifest's paths must sit under its folder: copy the images beside it
    for p in first["images"]:
        (tmp_path / p).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / p).write_bytes((anchors.parent / p).read_bytes())
    live["images"] = first["images"]
    man.write_text(json.dumps(live) + "\n")
    assert main(["import", "items", str(man), "--study", str(folder)]) == 0
    capsys.readouterr()
    _one_line(
        capsys,
        ["import", "anchors", str(anchors), "--study", str(folder)],
        f"'{first['item_id']}' is already in the study as a live item",
    )
    assert _count(folder, "anchors") == 0


def _png_bytes(im: Image.Image, fmt: str = "PNG") -> bytes:
    buf = io.BytesIO()
    im.save(buf, format=fmt)
    return buf.getvalue()


def test_16_bit_and_float_images_keep_their_tones(tmp_path):
    from annotator.ingest.media import encode_image

    ramp16 = np.tile(np.linspace(0, 65535, 256).astype(np.uint16), (8, 1))
    ramp_f = np.tile(np.linspace(0, 1, 256).astype(np.float32), (8, 1))
    for data in (
        _png_bytes(Image.fromarray(ramp16)),
        _png_bytes(Image.fromarray(ramp_f, "F"), "TIFF"),
    ):
        out = np.asarray(Image.open(io.BytesIO(encode_image(data, source="x").png)).convert("L"))[0]
        assert (
            out[0] == 0 and out[-1] == 255 and len(np.unique(out)) == 256
        )  # a ramp, not 0/255 or all black
        assert np.all(np.diff(out.astype(int)) == 1)


def test_animated_images_are_refused(tmp_path, capsys):
    frames = [Image.new("RGB", (8, 8), c) for c in ("red", "blue", "green")]
    src = tmp_path / "src"
    src.mkdir()
    frames[0].save(src / "a.gif", save_all=True, append_images=frames[1:])
    frames[0].save(src / "b.png", save_all=True, append_images=frames[1:])  # APNG
    folder = tmp_path / "st"
    Study.create(folder, RUBRIC).close()
    for name in ("a.gif", "b.png"):
        man = write_manifest(
            src,
            [{"item_id": name, "case_id": "c", "prompt": "p", "generator": "g", "images": [name]}],
            f"{name}.jsonl",
        )
        _one_line(
            capsys,
            ["import", "items", str(man), "--study", str(folder)],
            "animated image (3 frames)",
        )


def _racer(folder: str, n: int, out) -> None:
    try:
        study = Study.open(folder)
        session = LabelSession(study, "ann")
        acked = 0
        for _ in range(n):
            item = session.next()
            if item is None:
                break
            session.submit(item, ALL, 10)
            acked += 1  # submit returned: the answer is committed
        study.close()
        out.put(acked)
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        out.put(f"{type(exc).__name__}: {exc}")


def _sql(location, query: str) -> list[tuple]:
    from sqlalchemy import text

    study = Study.open(location, mode="read")
    try:
        with study.db.read() as s:
            return [tuple(r) for r in s.execute(text(query))]
    finally:
        study.close()


def test_two_processes_on_one_rater_lose_nothing_and_seed_one_anchor_per_slot(
    tmp_path, study_location
):
    folder = study_location
    study = Study.create(folder, RUBRIC)
    src = tmp_path / "src"
    study.import_items(write_manifest(src, basic_rows(src, n_cases=8, gens=("a", "b", "c", "d"))))
    study.import_anchors(REPO / "anchors" / "ui_mockup" / "anchors.jsonl")
    study.set_setting("anchor_every", 3)
    study.add_rater("ann")
    study.close()
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_racer, args=(str(folder), 30, out)) for _ in range(2)]
    for p in procs:
        p.start()
    results = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert all(isinstance(r, int) and r > 0 for r in results), results
    slots = _sql(
        folder,
        "SELECT before_position, count(*) FROM anchor_showings WHERE before_position >= 0 "
        "GROUP BY before_position HAVING count(*) > 1",
    )
    total = _sql(folder, "SELECT count(*) FROM judgements")[0][0]
    firsts = _sql(
        folder,
        "SELECT count(*) FROM judgements WHERE supersedes IS NULL AND context = 'live' "
        "GROUP BY item_pk HAVING count(*) > 1",
    )
    assert slots == [] and firsts == []
    assert total == sum(results)  # every acknowledged submit of both processes is in the log, once


# ---- crashes and raw errors ---------------------------------------------------------


@pytest.mark.parametrize("name", ["100% done", "a#b", "why?", "x%20y#z?w"])
def test_study_paths_with_url_characters(tmp_path, capsys, name):
    folder = tmp_path / name
    assert main(["new", str(folder), "--rubric", str(RUBRIC)]) == 0
    src = tmp_path / "src"
    assert (
        main(
            [
                "import",
                "items",
                str(write_manifest(src, basic_rows(src, n_cases=1))),
                "--study",
                str(folder),
            ]
        )
        == 0
    )
    assert main(["status", "--study", str(folder)]) == 0
    assert "items           3" in capsys.readouterr().out
    assert not (tmp_path / name.split("#")[0].split("?")[0]).with_suffix(".sqlite").exists()


def test_new_where_a_file_blocks_leaves_nothing(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    _one_line(capsys, ["new", str(blocker / "st"), "--rubric", str(RUBRIC)], "")
    assert blocker.read_text() == "x"


def test_study_database_as_a_folder_is_one_line(tmp_path, capsys):
    folder = tmp_path / "st"
    (folder / DB_NAME).mkdir(parents=True)
    _one_line(capsys, ["status", "--study", str(folder)], "is a folder, not a study file")


def test_corrupted_header_is_one_line(study, capsys):
    folder = study.folder
    study.close()
    raw = bytearray((folder / DB_NAME).read_bytes())
    raw[:16] = b"garbage header!!"
    (folder / DB_NAME).write_bytes(bytes(raw))
    _one_line(capsys, ["status", "--study", str(folder)], "header is missing or damaged")


def test_read_only_study_writes_are_one_line_and_reads_work(populated, capsys):
    folder = populated.folder
    populated.close()
    files = [folder / n for n in os.listdir(folder) if n.startswith(DB_NAME)]
    with immutable(*files, folder, folder / "media"):
        _one_line(capsys, ["rater", "add", "zed", "--study", str(folder)], "cannot be written")
        assert main(["status", "--study", str(folder)]) == 0
        assert "items" in capsys.readouterr().out


def test_locked_study_gives_one_line_not_a_raw_error(populated, capsys, monkeypatch):
    monkeypatch.setenv("ANNOTATOR_BUSY_TIMEOUT_MS", "200")
    folder = populated.folder
    populated.close()
    holder = sqlite3.connect(folder / DB_NAME, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        _one_line(capsys, ["rater", "add", "zed", "--study", str(folder)], "the study is busy")
        # WAL: a writer holding the lock does not keep readers out
        assert main(["status", "--study", str(folder)]) == 0
        capsys.readouterr()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert main(["rater", "add", "zed", "--study", str(folder)]) == 0


def test_a_rater_write_during_a_long_import_is_busy_not_raw(populated, monkeypatch):
    monkeypatch.setenv("ANNOTATOR_BUSY_TIMEOUT_MS", "100")
    populated.add_rater("ann")
    session = LabelSession(populated, "ann")
    item = session.next()
    holder = sqlite3.connect(populated.folder / DB_NAME, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # what an import's transaction holds
    try:
        with pytest.raises(StudyBusy, match="busy"):
            session.submit(item, ALL, 5)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    session.submit(item, ALL, 5)  # the kept answer goes in once the lock is free


def test_report_output_paths_are_checked_first(populated, tmp_path, capsys):
    f = tmp_path / "afile"
    f.write_text("x")
    _one_line(
        capsys,
        ["report", "--study", str(populated.folder), "--csv", str(f)],
        "is a file; --csv takes a folder",
    )
    _one_line(
        capsys, ["report", "--study", str(populated.folder), "--json", str(tmp_path)], "is a folder"
    )
    for boot in ("0", "-5"):
        _one_line(
            capsys,
            [
                "report",
                "--study",
                str(populated.folder),
                "--json",
                str(tmp_path / "r.json"),
                "--boot",
                boot,
            ],
            "give at least 1 resample",
        )


@pytest.mark.parametrize("case", ["directory", "long_name", "nul", "big_seed", "deep_json"])
def test_bad_paths_and_values_in_a_manifest_are_one_line(tmp_path, capsys, case):
    folder = tmp_path / "st"
    Study.create(folder, RUBRIC).close()
    src = tmp_path / "src"
    make_png(src / "ok.png")
    row = {"item_id": "i", "case_id": "c", "prompt": "p", "generator": "g", "images": ["ok.png"]}
    if case == "directory":
        argv, needle = (
            ["import", "items", str(src), "--study", str(folder)],
            "is a folder, not a file",
        )
    else:
        if case == "long_name":
            row["images"] = ["x" * 300 + ".png"]
            needle = "file name is too long"
        elif case == "nul":
            row["images"] = ["o\u0000k.png"]
            needle = "NUL"
        elif case == "big_seed":
            row["seed"] = 10**30
            needle = "does not fit in 64 bits"
        else:  # deep_json: the manifest's line is replaced below by one nested past the limit
            needle = "nested more than"
        man = write_manifest(src, [row])
        if case == "deep_json":
            man.write_text('{"item_id": ' + "[" * 200_000 + "]" * 200_000 + "}\n")
        argv = ["import", "items", str(man), "--study", str(folder)]
    _one_line(capsys, argv, needle)


def test_latin1_prompt_in_a_folder_import_is_one_line(tmp_path, capsys):
    folder = tmp_path / "st"
    Study.create(folder, RUBRIC).close()
    root = tmp_path / "shots"
    make_png(root / "case1" / "gen.png")
    (root / "case1" / "prompt.txt").write_bytes("Caf\u00e9 menu".encode("latin-1"))
    _one_line(capsys, ["import", "folder", str(root), "--study", str(folder)], "is not UTF-8 text")


def test_deeply_nested_verdict_rule_is_one_line(tmp_path, capsys):
    text = RUBRIC.read_text().replace(
        'rules = ["instruction_following == PASS"',
        'rules = ["' + "not (" * 2500 + "instruction_following == PASS" + ")" * 2500 + '"',
    )
    bad = tmp_path / "deep.toml"
    bad.write_text(text)
    _one_line(capsys, ["new", str(tmp_path / "st"), "--rubric", str(bad)], "verdict rule")
    shallow = RUBRIC.read_text().replace(
        'rules = ["instruction_following == PASS"',
        'rules = ["' + "not " * 40 + "instruction_following == PASS" + '"',
    )
    bad.write_text(shallow)
    _one_line(capsys, ["new", str(tmp_path / "st2"), "--rubric", str(bad)], "more than 32 deep")


def test_unbounded_scale_is_refused_at_new(tmp_path, capsys):
    bad = tmp_path / "wide.toml"
    bad.write_text(
        RUBRIC.read_text().replace(
            "min = 0\nmax = 5\nlevels = { 5 =", "min = 0\nmax = 1000000000\nlevels = { 5 =", 1
        )
    )
    _one_line(capsys, ["new", str(tmp_path / "st"), "--rubric", str(bad)], "at most 101")


# ---- inputs that should be accepted (or refused clearly) ---------------------------------


def test_jsonl_strings_may_hold_unicode_line_separators(tmp_path):
    study = Study.create(tmp_path / "st", RUBRIC)
    src = tmp_path / "src"
    rows = basic_rows(src, n_cases=1)
    rows[0]["prompt"] = "first\u2028second\u0085third"
    assert study.import_items(write_manifest(src, rows)) == 3
    with study.db.read():
        assert study.views_of(["it-0-0"])["it-0-0"].prompt == "first\u2028second\u0085third"
    study.close()


def test_long_reasons_in_a_csv_are_accepted_up_to_the_stated_bound(populated, tmp_path, capsys):
    ok = "x" * (200 * 1024)
    csv = tmp_path / "r.csv"
    lines = ["item_id,rater,metric,value"]
    for k, v in ALL.items():
        if k != "reason":
            lines.append(f"it-0-0,ann,{k},{v if not isinstance(v, list) else ''}")
    lines.append(f"it-0-0,ann,reason,{ok}")
    csv.write_text("\n".join(lines) + "\n")
    assert main(["import", "ratings", str(csv), "--study", str(populated.folder)]) == 0
    capsys.readouterr()
    csv.write_text("\n".join(lines[:-1] + [f"it-0-1,bob,reason,{'y' * (1100 * 1024)}"]) + "\n")
    _one_line(
        capsys,
        ["import", "ratings", str(csv), "--study", str(populated.folder)],
        "longer than 1024 KiB",
    )


def test_rubric_with_a_bom_loads(tmp_path):
    p = tmp_path / "bom.toml"
    p.write_bytes(b"\xef\xbb\xbf" + RUBRIC.read_bytes())
    from annotator.ingest.rubrics import load_rubric

    assert load_rubric(p).version == load_rubric(RUBRIC).version


@pytest.mark.parametrize(
    "field,value", [("item_id", "a\u0000b"), ("generator", "g\u001b[31m"), ("case_id", "c\u0007")]
)
def test_control_characters_in_ids_are_refused(tmp_path, capsys, field, value):
    folder = tmp_path / "st"
    Study.create(folder, RUBRIC).close()
    src = tmp_path / "src"
    rows = basic_rows(src, n_cases=1)
    rows[0][field] = value
    _one_line(
        capsys,
        ["import", "items", str(write_manifest(src, rows)), "--study", str(folder)],
        "control character",
    )


def test_control_characters_in_rater_names_are_refused(populated, tmp_path, capsys):
    csv = tmp_path / "r.csv"
    csv.write_text("item_id,rater,metric,value,partial\nit-0-0,a\x1bnn,layout_hierarchy,3,yes\n")
    _one_line(
        capsys,
        ["import", "ratings", str(csv), "--study", str(populated.folder)],
        "control character",
    )
    _one_line(
        capsys,
        ["rater", "add", "bad\x00name", "--study", str(populated.folder)],
        "control character",
    )


def test_partial_judgement_in_a_ratings_csv_is_refused_naming_the_missing(
    populated, tmp_path, capsys
):
    csv = tmp_path / "r.csv"
    csv.write_text("item_id,rater,metric,value\nit-0-0,ann,layout_hierarchy,3\n")
    err = _one_line(
        capsys,
        ["import", "ratings", str(csv), "--study", str(populated.folder)],
        "not the required",
    )
    assert "instruction_following" in err and "text_rendering" in err and "ui_affordance" in err
    csv.write_text("item_id,rater,metric,value,partial\nit-0-0,ann,layout_hierarchy,3,yes\n")
    assert main(["import", "ratings", str(csv), "--study", str(populated.folder)]) == 0


@pytest.mark.parametrize(
    "value", ['{"x": NaN}', '{"verdict_pass_rate": Infinity}', "[1, -Infinity]"]
)
def test_non_finite_settings_are_refused(populated, capsys, value):
    _one_line(capsys, ["set", "release_gate", value, "--study", str(populated.folder)], "finite")


def _fill(disk: Path) -> Path:
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)
    return filler


def test_full_disk_mid_session_is_one_line_and_the_answer_can_be_given_again(tmp_path):
    from annotator.domain.errors import StudyError

    with small_disk(tmp_path, 4096) as disk:
        study = Study.create(disk / "st", RUBRIC)
        src = tmp_path / "src"
        study.import_items(write_manifest(src, basic_rows(src, n_cases=2)))
        study.add_rater("ann")
        session = LabelSession(study, "ann")
        item = session.next()
        filler = _fill(disk)
        with pytest.raises(StudyError) as err:  # the disk is full: refused whole, one line
            for _ in range(
                50
            ):  # a page or two of WAL may still fit: keep answering until it does not
                session.submit(item, ALL, 5)
                item = session.next()
        assert "\n" not in str(err.value) and (
            "disk is full" in str(err.value) or "disk I/O" in str(err.value)
        )
        filler.unlink()
        kept = session.submit(item, ALL, 5)  # the same answer, once there is room
        assert kept > 0
        study.close()


def test_opening_a_study_on_a_full_disk_is_one_line(tmp_path, capsys):
    with small_disk(tmp_path, 4096) as disk:
        Study.create(disk / "st", RUBRIC).close()
        for name in os.listdir(disk / "st"):
            if name.endswith(("-wal", "-shm")):
                (disk / "st" / name).unlink()
        filler = _fill(disk)
        err = _one_line(capsys, ["rater", "add", "zed", "--study", str(disk / "st")], "")
        assert "disk" in err or "cannot be written" in err
        filler.unlink()
        assert main(["rater", "add", "zed", "--study", str(disk / "st")]) == 0


@pytest.mark.parametrize("what", ["report csv", "export hf", "export label-studio"])
def test_reports_and_exports_on_a_full_disk_are_one_line_and_leave_no_partial_folder(
    tmp_path, capsys, small_demo_dir, what
):
    """A report's tables, a dataset folder and Label Studio's tasks with their images, written on
    a disk that fills midway: one line saying so (not "internal error ... this is a bug"), and
    the output folder holds none of them (all land, or none)."""
    # each about half of what it writes (csv 376 KiB, hf 84, label-studio 3.7 MiB)
    kib = {"report csv": 192, "export hf": 48, "export label-studio": 1024}[what]
    with small_disk(tmp_path, kib) as disk:
        out = disk / "out"
        args = {
            "report csv": ["report", "--study", str(small_demo_dir), "--csv", str(out)],
            "export hf": ["export", "hf", "--study", str(small_demo_dir), "--out", str(out)],
            "export label-studio": [
                "export",
                "label-studio",
                "--study",
                str(small_demo_dir),
                "--out",
                str(out / "tasks.json"),
            ],
        }[what]
        assert main([*args, "--boot", "20"]) == 2
        said = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("annotator:")]
        assert len(said) == 1 and "internal error" not in said[0], said  # progress lines aside
        assert "disk is full" in said[0], said
        left = sorted(p.relative_to(disk) for p in disk.rglob("*") if p.is_file())
        assert left == [], left
