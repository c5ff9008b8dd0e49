from text_util import shout


def main() -> str:
    return shout("hello")


if __name__ == "__main__":
    print(main())
