import pytest

from batching import chunks


def test_chunks():
    assert chunks([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]


@pytest.mark.parametrize("size", [0, -1])
def test_bad_size(size):
    with pytest.raises(ValueError, match="size must be at least 1"):
        chunks([1, 2], size)
