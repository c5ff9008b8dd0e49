from users import get_usr


def greeting(user_id: int) -> str:
    return f"Hello, {get_usr(user_id)}!"
