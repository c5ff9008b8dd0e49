from client import Client


def test_default_timeout():
    assert Client().timeout == 30


def test_given_timeout():
    assert Client(timeout=5).timeout == 5
