import users


def names(ids: list[int]) -> list[str]:
    return [users.get_usr(i) for i in ids]
