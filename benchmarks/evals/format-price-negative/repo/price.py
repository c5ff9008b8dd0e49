"""Prices shown to customers, in euros, with a decimal comma."""


def format_price(amount: float) -> str:
    """``amount`` in euros as text: ``format_price(1234.5)`` is ``"1234,50 €"``."""
    cents = round(abs(amount) * 100)
    return f"{cents // 100},{cents % 100:02d} €"
