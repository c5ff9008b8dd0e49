"""pass@k (evals.report.pass_at_k) against the closed form of Chen et al. 2021, section 2.1."""

from __future__ import annotations

from math import comb

import pytest

from agent_ls.evals.report import pass_at_k


@pytest.mark.parametrize(
    ("n", "c", "k"), [(1, 0, 1), (1, 1, 1), (2, 1, 1), (2, 1, 2), (10, 3, 5), (20, 0, 4)]
)
def test_pass_at_k_is_the_unbiased_estimator(n: int, c: int, k: int) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(1 - comb(n - c, k) / comb(n, k))


def test_pass_at_k_with_k_equal_to_n_is_whether_any_attempt_passed() -> None:
    assert [pass_at_k(3, c, 3) for c in range(4)] == [0.0, 1.0, 1.0, 1.0]


@pytest.mark.parametrize(("n", "c", "k"), [(2, 3, 1), (2, 1, 3), (2, 1, 0)])
def test_impossible_counts_are_refused(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError, match="pass@k needs"):
        pass_at_k(n, c, k)
