def slugify(title: str) -> str:
    """``"Hello  World"`` -> ``"hello-world"``: lower case, words joined by one hyphen."""
    return "-".join(title.lower().split(" "))
