USERS = {1: "ada", 2: "grace"}


def get_usr(user_id: int) -> str:
    """The name of user ``user_id``; KeyError for an unknown id."""
    return USERS[user_id]
