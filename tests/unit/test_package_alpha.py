"""package_alpha is krippendorff.alpha to the last bit (the package itself is the oracle), on
value counts of the shapes a report meets: yes/no gates, scales, many items, few answers."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest

from annotator.stats.package_alpha import package_alpha

LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _counts(rng: np.random.Generator, n: int, V: int) -> np.ndarray:
    answers = rng.integers(1, 13, n)  # some units with one answer: pairable as two
    return rng.multinomial(answers, rng.dirichlet(np.ones(V) * 0.7)).astype(float)


@pytest.mark.parametrize("n", [1, 2, 7, 1_000, 20_000, 120_000])
def test_the_packages_number_bit_for_bit(n: int) -> None:
    rng = np.random.default_rng(n)
    for V in (2, 3, 6, 11):
        counts = _counts(rng, n, V)
        counts[0] = 0.0
        counts[0, 0] = 2.0  # at least one unit with two answers, as the package asks
        for domain in (np.arange(V, dtype=float), np.sort(rng.choice(90, V, replace=False)) / 8):
            for level in LEVELS:
                with np.errstate(divide="ignore", invalid="ignore"):
                    want = krippendorff.alpha(
                        value_counts=counts, value_domain=domain, level_of_measurement=level
                    )
                    got = package_alpha(counts, domain, level)
                assert type(got) is float
                assert np.array_equal(got, float(want), equal_nan=True), (n, V, level)


def test_what_the_package_refuses_it_refuses_alike() -> None:
    one_answer = np.array([[1.0, 0.0], [0.0, 1.0]])
    for counts, domain in ((one_answer, [0.0, 1.0]), (np.ones((3, 1)) * 2, [0.0])):
        with pytest.raises(ValueError) as theirs:
            krippendorff.alpha(value_counts=counts, value_domain=domain)
        with pytest.raises(ValueError) as ours:
            package_alpha(counts, np.asarray(domain), "interval")
        assert str(ours.value) == str(theirs.value)
    # whole-number counts go to the package as they are
    ints = np.array([[2, 1], [0, 3], [1, 1]])
    want = krippendorff.alpha(
        value_counts=ints, value_domain=[0, 1], level_of_measurement="nominal"
    )
    assert package_alpha(ints, np.array([0, 1]), "nominal") == float(want)
