from main import main


def test_main():
    assert main() == "HELLO!"
