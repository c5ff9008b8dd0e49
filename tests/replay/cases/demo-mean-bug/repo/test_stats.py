import pytest

from stats import mean, spread


def test_mean_of_three() -> None:
    assert mean([1, 2, 3]) == 2


def test_mean_of_one() -> None:
    assert mean([5]) == 5


def test_mean_rejects_empty() -> None:
    with pytest.raises(ValueError):
        mean([])


def test_spread() -> None:
    assert spread([3, 9, 4]) == 6
