from stats import mean


def test_mean():
    assert mean([1, 2, 3, 4]) == 2.5


def test_empty():
    assert mean([]) == 0.0
