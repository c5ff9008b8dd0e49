from paging import page

ITEMS = list("abcdefg")


def test_first_page():
    assert page(ITEMS, 1, 3) == ["a", "b", "c"]


def test_last_page():
    assert page(ITEMS, 3, 3) == ["g"]
