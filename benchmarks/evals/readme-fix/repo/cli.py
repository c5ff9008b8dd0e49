import argparse

parser = argparse.ArgumentParser(prog="tool")
parser.add_argument("--debug", action="store_true", help="print what is done")
args = parser.parse_args()
print("debug" if args.debug else "quiet")
