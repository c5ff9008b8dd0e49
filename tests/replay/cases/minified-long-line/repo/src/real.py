def needle():
    return 42
