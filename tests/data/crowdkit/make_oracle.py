"""Freeze crowd-kit's DawidSkene and MACE outputs on a fixed dataset (the oracle of
tests/unit/test_stats_competence.py).

crowd-kit is not a dependency of annotator (it pulls transformers and nltk), so it runs in a
throwaway virtual environment:

    python -m venv /tmp/ckvenv && /tmp/ckvenv/bin/pip install crowd-kit==1.4.2
    /tmp/ckvenv/bin/python tests/data/crowdkit/make_oracle.py

It writes answers.csv (task, worker, label) and oracle.json next to this script. The data are
simulated here with numpy's seeded generator; workers and labels first appear in sorted order,
because crowd-kit's MACE indexes its strategy counts in sorted order but its parameters in
order of first appearance (the two agree only then).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from crowdkit.aggregation import MACE, DawidSkene

HERE = Path(__file__).parent
N_ITEMS, N_LABELS = 120, 3
ACCURACY = [0.75, 0.7, 0.65, 0.6, 0.55, None, "adversary"]  # None: uniform spammer


def simulate() -> pd.DataFrame:
    rng = np.random.default_rng(2025)
    truth = rng.integers(0, N_LABELS, N_ITEMS)
    rows = []
    for t in range(N_ITEMS):
        for w, acc in enumerate(ACCURACY):
            if t > 0 and rng.random() < 0.4:  # many answers missing: uncertain posteriors
                continue
            if acc is None:
                label = int(rng.integers(0, N_LABELS))
            elif acc == "adversary":
                label = int((truth[t] + 1) % N_LABELS)
            elif rng.random() < acc:
                label = int(truth[t])
            else:
                label = int((truth[t] + rng.integers(1, N_LABELS)) % N_LABELS)
            rows.append((f"t{t:03d}", f"w{w}", label))
    df = pd.DataFrame(rows, columns=["task", "worker", "label"])
    # labels first seen in sorted order: the first task's first answers are 0, 1, 2
    df.loc[: N_LABELS - 1, "label"] = np.arange(N_LABELS)
    return df


def main() -> None:
    df = simulate()
    df.to_csv(HERE / "answers.csv", index=False)
    ds = DawidSkene(n_iter=100, tol=-np.inf)  # -inf: exactly n_iter rounds, no early stop
    ds_post = ds.fit_predict_proba(df)
    mace = MACE(n_restarts=1, n_iter=50, method="em", random_state=0)
    mace_post = mace.fit_predict_proba(df)
    out = {
        "crowdkit_version": "1.4.2",
        "dawid_skene": {
            "n_iter": 100,
            "posterior": {t: [float(v) for v in r] for t, r in ds_post.sort_index().iterrows()},
            "labels": [int(c) for c in ds_post.columns],
        },
        "mace": {
            "n_iter": 50,
            "method": "em",
            "posterior": {
                t: [float(r[c]) for c in sorted(mace_post.columns)]
                for t, r in mace_post.sort_index().iterrows()
            },
            "competence": {
                w: float(c)
                for w, c in zip(sorted(df["worker"].unique()), mace.spamming_[:, 1], strict=False)
            },
        },
    }
    (HERE / "oracle.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
