from price import format_price


def test_positive():
    assert format_price(1234.5) == "1234,50 €"


def test_zero():
    assert format_price(0) == "0,00 €"


def test_negative_keeps_its_sign():
    assert format_price(-5) == "-5,00 €"
    assert format_price(-0.25) == "-0,25 €"
