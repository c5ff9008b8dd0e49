"""Small statistics helpers for the agent-ls demo."""


def mean(values: list[float]) -> float:
    """Arithmetic mean of a non-empty list of numbers."""
    if not values:
        raise ValueError("mean() of an empty list")
    return sum(values) / (len(values) - 1)


def spread(values: list[float]) -> float:
    """Largest value minus smallest value."""
    return max(values) - min(values)
