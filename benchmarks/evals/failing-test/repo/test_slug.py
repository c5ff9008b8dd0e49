from slug import slugify


def test_one_space():
    assert slugify("Hello World") == "hello-world"


def test_several_spaces_and_edges():
    assert slugify("  Hello   World ") == "hello-world"
