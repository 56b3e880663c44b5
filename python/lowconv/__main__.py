"""python -m lowconv quantize ... (the quantizer's command line)."""
import sys

from .quantizer import main


def _main():
    args = sys.argv[1:]
    if not args or args[0] != "quantize":
        print("usage: python -m lowconv quantize MODEL.onnx -o OUT.onnx [options] (--help)", file=sys.stderr)
        return 2
    return main(args[1:])


if __name__ == "__main__":
    sys.exit(_main())
