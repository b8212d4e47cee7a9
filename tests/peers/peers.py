"""The real tools, installed and driven through their own HTTP APIs (no mocks, no fixtures).

Label Studio and Potato are installed once per machine, each into its own virtual environment
under a cache folder (`$ANNOTATOR_PEERS_CACHE`, default ~/.cache/annotator-peers/<tool>-<version>),
at the pinned versions below; a server is started on a free loopback port with its data in a
temporary folder, and stopped by its process (the process group it was started in), never by name.
`record.py` uses the same drivers to write the fixtures of tests/data/interop/peers/.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

LABEL_STUDIO = ("label-studio", "1.23.2")
# what a peer's own pins leave open and a later release broke: sentry-sdk 3.0 (2026) refuses
# Label Studio 1.23.2's `send_default_pii` option, and the server exits at start
PINNED = {"label-studio": ("sentry-sdk<3",)}
POTATO = ("potato-annotation", "2.12.1")
LEAD_EMAIL = "lead@annotator.invalid"
LEAD_TOKEN = "a0c1e2d3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9"  # a local, throwaway server's legacy token


def cache_root() -> Path:
    return Path(os.environ.get("ANNOTATOR_PEERS_CACHE", Path.home() / ".cache" / "annotator-peers"))


def install(package: str, version: str, *, timeout: float = 1500) -> Path:
    """The venv holding `package==version` (made once; a half-made one is made again). Raises
    RuntimeError with pip's last lines when it cannot be installed."""
    venv = cache_root() / f"{package}-{version}"
    done = venv / ".installed"
    # the marker names what was installed: a venv made with other pins is made again
    wants = (f"{package}=={version}", *PINNED.get(package, ()))
    if _made(done, wants):
        return venv
    venv.parent.mkdir(parents=True, exist_ok=True)
    # two test runs on one machine install once: the second waits for the first's lock
    with open(venv.parent / f"{package}-{version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _made(done, wants):
            return venv
        return _install(wants, venv, done, timeout)


def _made(done: Path, wants: tuple[str, ...]) -> bool:
    return done.exists() and done.read_text() == " ".join(wants) + "\n"


def _install(wants: tuple[str, ...], venv: Path, done: Path, timeout: float) -> Path:
    if venv.exists():
        shutil.rmtree(venv)
    venv.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    # the peer's own dependency pins, not this machine's pip configuration (constraints for our
    # own environment would fight Label Studio's pins)
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull, "PIP_CONSTRAINT": ""}
    env.pop("PYTHONPATH", None)
    r = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", *wants],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
    if r.returncode != 0:
        tail = " | ".join((r.stderr or r.stdout).strip().splitlines()[-3:])
        raise RuntimeError(f"pip install {' '.join(wants)} failed: {tail}")
    done.write_text(" ".join(wants) + "\n")
    return venv


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    """A peer's server process, in its own process group so that it stops with its children."""

    name: str
    base: str
    proc: subprocess.Popen
    log: Path

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)

    def tail(self) -> str:
        try:
            return " | ".join(self.log.read_text(errors="replace").strip().splitlines()[-5:])
        except OSError:
            return ""


def start(
    name: str, cmd: list[str], cwd: Path, url: str, probe: str, env: dict[str, str], wait: float
) -> Server:
    log = cwd / f"{name}.log"
    full_env = {**os.environ, **env}
    full_env.pop("PYTHONPATH", None)
    with log.open("wb") as fh:
        proc = subprocess.Popen(
            cmd, cwd=cwd, stdout=fh, stderr=subprocess.STDOUT, env=full_env, start_new_session=True
        )
    srv = Server(name, url, proc, log)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited ({proc.returncode}): {srv.tail()}")
        try:
            if requests.get(url + probe, timeout=5).status_code < 500:
                return srv
        except requests.RequestException:
            pass
        time.sleep(1)
    srv.stop()
    raise RuntimeError(f"{name} did not answer on {url} within {wait:.0f} s: {srv.tail()}")


# ---- Label Studio ----------------------------------------------------------------------------


def start_label_studio(venv: Path, work: Path, media_root: Path) -> Server:
    port = free_port()
    env = {
        "LABEL_STUDIO_LOCAL_FILES_SERVING_ENABLED": "true",
        "LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT": str(media_root),
        "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "false",
        "HOME": str(work),  # nothing written to the user's own Label Studio folder
    }
    cmd = [
        str(venv / "bin" / "label-studio"),
        "start",
        "--no-browser",
        "--data-dir",
        str(work / "ls-data"),
        "--internal-host",
        "127.0.0.1",
        "-p",
        str(port),
        "--username",
        LEAD_EMAIL,
        "--password",
        "lead-pass-123",
        "--user-token",
        LEAD_TOKEN,
        "--enable-legacy-api-token",
    ]
    return start("label-studio", cmd, work, f"http://127.0.0.1:{port}", "/health", env, wait=420)


@dataclass
class LabelStudio:
    """Label Studio's HTTP API as the lead (legacy token) and as the raters (signed up)."""

    base: str
    token: str = LEAD_TOKEN
    users: dict[str, dict[str, Any]] = field(default_factory=dict)  # email -> {id, token}

    def _h(self, token: str | None = None) -> dict[str, str]:
        return {"Authorization": f"Token {token or self.token}"}

    def call(self, method: str, path: str, *, token: str | None = None, **kw: Any) -> Any:
        r = requests.request(method, self.base + path, headers=self._h(token), timeout=120, **kw)
        if r.status_code >= 400:
            raise RuntimeError(f"{method} {path}: HTTP {r.status_code}: {r.text[:300]}")
        return r.json() if r.content else None

    def signup(self, email: str) -> dict[str, Any]:
        """A rater's account, as the sign-up page makes it, and its API token."""
        s = requests.Session()
        s.get(self.base + "/user/signup/", timeout=60)
        s.post(
            self.base + "/user/signup/",
            data={
                "email": email,
                "password": "rater-pass-123",
                "csrfmiddlewaretoken": s.cookies.get("csrftoken", ""),
            },
            headers={"Referer": self.base + "/user/signup/"},
            timeout=60,
        )
        token = s.get(self.base + "/api/current-user/token", timeout=60).json()["token"]
        who = s.get(self.base + "/api/current-user/whoami", timeout=60).json()
        self.users[email] = {"id": who["id"], "token": token}
        return self.users[email]

    def validate(self, config: str) -> None:
        self.call("POST", "/api/projects/validate", json={"label_config": config})

    def project(self, title: str, config: str) -> int:
        return self.call("POST", "/api/projects", json={"title": title, "label_config": config})[
            "id"
        ]

    def import_tasks(self, pid: int, tasks: list[dict[str, Any]]) -> dict[str, Any]:
        return self.call("POST", f"/api/projects/{pid}/import", json=tasks)

    def tasks(self, pid: int) -> list[dict[str, Any]]:
        got = self.call("GET", f"/api/tasks?project={pid}&page_size=1000")
        return got["tasks"] if isinstance(got, dict) else got

    def annotate(
        self, task_id: int, result: list[dict[str, Any]], email: str, lead_time: float = 4.5
    ) -> int:
        body = {"result": result, "lead_time": lead_time, "was_cancelled": False}
        return self.call(
            "POST", f"/api/tasks/{task_id}/annotations", json=body, token=self.users[email]["token"]
        )["id"]

    def relabel(self, ann_id: int, result: list[dict[str, Any]], email: str) -> None:
        self.call(
            "PATCH",
            f"/api/annotations/{ann_id}",
            json={"result": result},
            token=self.users[email]["token"],
        )

    def export_default(self, pid: int) -> list[dict[str, Any]]:
        """What the project's Export button downloads."""
        return self.call("GET", f"/api/projects/{pid}/export?exportType=JSON")

    def export_snapshot(self, pid: int) -> list[dict[str, Any]]:
        """A snapshot export with predictions and users expanded."""
        snap = self.call(
            "POST",
            f"/api/projects/{pid}/exports/",
            json={
                "title": "annotator round trip",
                "serialization_options": {
                    "predictions": {"only_id": False},
                    "annotations__completed_by": {"only_id": False},
                },
            },
        )
        for _ in range(120):
            got = self.call("GET", f"/api/projects/{pid}/exports/{snap['id']}")
            if got.get("status") == "completed":
                break
            if got.get("status") == "failed":
                raise RuntimeError(f"snapshot export failed: {got}")
            time.sleep(1)
        r = requests.get(
            self.base + f"/api/projects/{pid}/exports/{snap['id']}/download?exportType=JSON",
            headers=self._h(),
            timeout=120,
        )
        r.raise_for_status()
        return r.json()


# ---- Potato ----------------------------------------------------------------------------------


def potato_config(rubric: Any, data_file: str) -> dict[str, Any]:
    """A Potato project asking our rubric's questions: one scheme per metric, named by its key."""
    schemes: list[dict[str, Any]] = []
    for m in rubric.metrics:
        base = {"name": m.key, "description": m.label}
        if m.kind == "text":
            schemes.append({**base, "annotation_type": "text"})
        elif m.kind == "tags":
            schemes.append({**base, "annotation_type": "multiselect", "labels": list(m.values())})
        elif m.kind == "scale":
            # Potato's likert points are 1..size: a 1..N scale is its own
            schemes.append(
                {
                    **base,
                    "annotation_type": "likert",
                    "size": int(m.max),
                    "min_label": "low",
                    "max_label": "high",
                }
            )
        elif m.kind == "likert":
            schemes.append(
                {
                    **base,
                    "annotation_type": "likert",
                    "size": len(m.levels),
                    "min_label": m.levels[1],
                    "max_label": m.levels[len(m.levels)],
                }
            )
        else:
            schemes.append(
                {**base, "annotation_type": "radio", "labels": [str(v) for v in m.values()]}
            )
    return {
        "annotation_task_name": "annotator round trip",
        "task_dir": ".",
        "output_annotation_dir": "annotation_output/",
        "output_annotation_format": "jsonl",
        "data_files": [data_file],
        "item_properties": {"id_key": "id", "text_key": "text"},
        "user_config": {"allow_all_users": True, "users": []},
        "require_password": False,
        "annotation_schemes": schemes,
    }


def start_potato(venv: Path, work: Path) -> Server:
    port = free_port()
    cmd = [
        str(venv / "bin" / "potato"),
        "start",
        "config.yaml",
        "-p",
        str(port),
        "--host",
        "127.0.0.1",
    ]
    return start(
        "potato", cmd, work, f"http://127.0.0.1:{port}", "/", {"HOME": str(work)}, wait=180
    )


class PotatoUser:
    """One annotator in Potato's web app, posting what its annotation.js posts."""

    def __init__(self, base: str, name: str) -> None:
        self.base = base
        self.s = requests.Session()
        self.s.post(base + "/auth", data={"email": name, "pass": ""}, timeout=60)

    def current(self) -> str | None:
        return self.s.get(self.base + "/api/current_instance", timeout=60).json().get("instance_id")

    def save(self, iid: str, labels: dict[str, dict[str, str]], seconds: float = 6.0) -> None:
        """`labels`: scheme -> {label: value}, flattened as annotation.js does ("scheme:label")."""
        r = self.s.post(
            self.base + "/updateinstance",
            json={
                "instance_id": iid,
                "annotations": {f"{k}:{lab}": v for k, d in labels.items() for lab, v in d.items()},
                "span_annotations": [],
                "client_timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "response_time_seconds": seconds,
            },
            timeout=60,
        )
        if r.status_code != 200 or r.json().get("status") == "error":
            raise RuntimeError(f"Potato refused the save of {iid}: {r.text[:200]}")

    def go(self, action: str, iid: str) -> None:
        self.s.post(
            self.base + "/annotate",
            json={"action": action, "instance_id": iid},
            headers={"X-Potato-Navigation": "1"},
            timeout=60,
        )


def potato_export(venv: Path, work: Path) -> Path:
    """Potato's own `python -m potato.export --format jsonl` of the project's annotations."""
    out = work / "potato-export"
    env = {**os.environ}
    env.pop("PYTHONPATH", None)
    subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "potato.export",
            "-c",
            "config.yaml",
            "-f",
            "jsonl",
            "-o",
            str(out),
        ],
        cwd=work,
        check=True,
        capture_output=True,
        env=env,
        timeout=300,
    )
    return out / "annotations.jsonl"


def write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


# ---- the scenarios (shared by the round-trip tests and record.py) ----------------------------

RATERS = ("ana@annotator.invalid", "ben@annotator.invalid")


def _choices(name: str, *labels: str) -> dict[str, Any]:
    return {
        "from_name": name,
        "to_name": "prompt",
        "type": "choices",
        "value": {"choices": list(labels)},
    }


def _text(name: str, text: str) -> dict[str, Any]:
    return {"from_name": name, "to_name": "prompt", "type": "textarea", "value": {"text": [text]}}


# what the two Label Studio raters answer, by item: (metric -> labels); no failure_tags result is
# a tags control left unticked (Label Studio writes nothing for it)
LS_ANSWERS: dict[str, dict[str, list[dict[str, Any]]]] = {
    RATERS[0]: {
        "it-1": [
            _choices("instruction_following", "PASS"),
            _choices("quality", "4"),
            _choices("style", "photo"),
            _text("reason", "three apples, fine"),
        ],
        "it-2": [
            _choices("instruction_following", "FAIL"),
            _choices("quality", "2"),
            _choices("style", "illustration"),
            _choices("failure_tags", "wrong_count", "text_garbled"),
            _choices("clarity", "Fair"),
        ],
    },
    RATERS[1]: {
        "it-1": [
            _choices("instruction_following", "PASS"),
            _choices("quality", "5"),
            _choices("style", "photo"),
            _choices("failure_tags", "extra_limbs"),
        ],
        "it-2": [
            _choices("instruction_following", "cannot_judge"),
            _choices("quality", "1"),
            _choices("style", "diagram"),
        ],
    },
}
# ana changes her mind on it-1 (a PATCH of her annotation, as the editor's Update button does)
LS_RELABEL = [
    _choices("instruction_following", "FAIL"),
    _choices("quality", "3"),
    _choices("style", "photo"),
    _choices("failure_tags", "text_garbled"),
]


def drive_label_studio(ls: LabelStudio, exported: Path) -> dict[str, Any]:
    """Our export (`exported`: tasks.json, tasks-pairs.json and their configs) into two projects,
    annotated by two raters, one relabel; returns the exports Label Studio writes and the ids."""
    item_cfg = (exported / "tasks.config.xml").read_text()
    pair_cfg = (exported / "tasks-pairs.config.xml").read_text()
    ls.validate(item_cfg)
    ls.validate(pair_cfg)
    items = ls.project("annotator items", item_cfg)
    pairs = ls.project("annotator pairs", pair_cfg)
    imported = {
        "items": ls.import_tasks(items, json.loads((exported / "tasks.json").read_text())),
        "pairs": ls.import_tasks(pairs, json.loads((exported / "tasks-pairs.json").read_text())),
    }
    for email in RATERS:
        ls.signup(email)
    by_item = {t["meta"]["annotator"]["item_id"]: t["id"] for t in ls.tasks(items)}
    ann: dict[tuple[str, str], int] = {}
    for email in RATERS:
        for item_id, result in LS_ANSWERS[email].items():
            ann[(email, item_id)] = ls.annotate(by_item[item_id], result, email)
    ls.relabel(ann[(RATERS[0], "it-1")], LS_RELABEL, RATERS[0])
    pair_tasks = ls.tasks(pairs)
    first = pair_tasks[0]["id"]
    ls.annotate(
        first,
        [
            {
                "from_name": "preference",
                "to_name": "preference",
                "type": "pairwise",
                "value": {"selected": "left"},
            }
        ],
        RATERS[0],
    )
    ls.annotate(first, [_choices("preference_tie", "both")], RATERS[1])
    generic = ls.project("a team's own project", GENERIC_CONFIG)
    imported["generic"] = ls.import_tasks(generic, GENERIC_TASKS)
    for t in ls.tasks(generic):
        for email in RATERS:
            ls.annotate(t["id"], GENERIC_ANSWERS[(email, t["data"]["image"])], email)
    return {
        "generic-default": ls.export_default(generic),
        "imported": imported,
        "users": {email: ls.users[email]["id"] for email in RATERS},
        "pair_task": pair_tasks[0]["meta"]["annotator"],
        "items-default": ls.export_default(items),
        "items-snapshot": ls.export_snapshot(items),
        "pairs-default": ls.export_default(pairs),
        "pairs-snapshot": ls.export_snapshot(pairs),
    }


# A team's own Label Studio project (not made by annotator): images by local-files path, no item
# or case ids, the model in its own data key, a 6-star Rating, a multiple-choice control.
GENERIC_CONFIG = """<View>
  <Image name="image" value="$image"/>
  <Text name="prompt" value="$prompt"/>
  <Choices name="if_ok" toName="image" choice="single">
    <Choice value="Yes"/><Choice value="No"/>
  </Choices>
  <Rating name="stars" toName="image" maxRating="6"/>
  <Choices name="problems" toName="image" choice="multiple">
    <Choice value="Garbled text"/><Choice value="Wrong count"/><Choice value="Extra limbs"/>
  </Choices>
</View>
"""
GENERIC_TASKS = [
    {
        "data": {
            "image": "/data/local-files/?d=media/apples_a.png",
            "prompt": "Three red apples on a table",
            "model_name": "gen-a",
        }
    },
    {
        "data": {
            "image": "/data/local-files/?d=media/apples_b.png",
            "prompt": "Three red apples on a table",
            "model_name": "gen-b",
        }
    },
]


def _generic(ok: str, stars: int, *problems: str) -> list[dict[str, Any]]:
    out = [
        {"from_name": "if_ok", "to_name": "image", "type": "choices", "value": {"choices": [ok]}},
        {"from_name": "stars", "to_name": "image", "type": "rating", "value": {"rating": stars}},
    ]
    if problems:
        out.append(
            {
                "from_name": "problems",
                "to_name": "image",
                "type": "choices",
                "value": {"choices": list(problems)},
            }
        )
    return out


GENERIC_ANSWERS = {
    (RATERS[0], GENERIC_TASKS[0]["data"]["image"]): _generic("Yes", 6),
    (RATERS[0], GENERIC_TASKS[1]["data"]["image"]): _generic("No", 2, "Wrong count"),
    (RATERS[1], GENERIC_TASKS[0]["data"]["image"]): _generic("Yes", 5, "Extra limbs"),
    (RATERS[1], GENERIC_TASKS[1]["data"]["image"]): _generic(
        "No", 1, "Wrong count", "Garbled text"
    ),
}


# Potato: the two users' answers (scheme -> {label: value}, as annotation.js posts them); bob
# leaves failure_tags unticked on it-1 (Potato writes nothing for it)
PO_ANSWERS: dict[str, dict[str, dict[str, dict[str, str]]]] = {
    "alice": {
        "it-1": {
            "instruction_following": {"PASS": "PASS"},
            "quality": {"4": "4"},
            "style": {"photo": "photo"},
            "failure_tags": {"extra_limbs": "extra_limbs"},
            "reason": {"text_box": "looks right"},
            "clarity": {"3": "3"},
        },
        "it-2": {
            "instruction_following": {"FAIL": "FAIL"},
            "quality": {"2": "2"},
            "style": {"illustration": "illustration"},
            "failure_tags": {"wrong_count": "wrong_count", "text_garbled": "text_garbled"},
        },
    },
    "bob": {
        "it-1": {
            "instruction_following": {"PASS": "PASS"},
            "quality": {"5": "5"},
            "style": {"photo": "photo"},
        },
        "it-2": {
            "instruction_following": {"FAIL": "FAIL"},
            "quality": {"1": "1"},
            "style": {"diagram": "diagram"},
            "failure_tags": {"text_garbled": "text_garbled"},
            "reason": {"text_box": "two, not three"},
        },
    },
}
# alice goes back to it-1 and changes her answer
PO_RELABEL = {
    "instruction_following": {"FAIL": "FAIL"},
    "quality": {"3": "3"},
    "style": {"photo": "photo"},
    "failure_tags": {"wrong_count": "wrong_count"},
    "reason": {"text_box": "on second look: two apples"},
}


def drive_potato(base: str) -> None:
    for name, answers in PO_ANSWERS.items():
        u = PotatoUser(base, name)
        order = list(answers)
        for i, iid in enumerate(order):
            got = u.current()
            if got != iid:
                raise RuntimeError(f"Potato shows {name} {got}, not {iid}")
            u.save(iid, answers[iid])
            if name == "alice" and i == 1:
                u.go("prev_instance", iid)
                u.save(order[0], PO_RELABEL)
            elif i + 1 < len(order):
                u.go("next_instance", iid)
