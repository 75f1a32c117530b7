"""Long runs of the program fuzzer (see `fuzzing`), from the repository root:

    python tests/fuzz.py --n 10000 --seed 0 --out DIR [--orders 2] [--jobs 2]
    python tests/fuzz.py --check DIR/FILE.py
"""

from fuzzing.command import main

if __name__ == "__main__":
    main()
