import app
import report
import users


def test_get_user():
    assert users.get_user(1) == "ada"


def test_callers():
    assert app.greeting(2) == "Hello, grace!"
    assert report.names([2, 1]) == ["grace", "ada"]
