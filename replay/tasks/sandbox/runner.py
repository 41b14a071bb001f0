"""Runs inside the sandbox: `runner.py SOLUTION INPUT_PATH OUTPUT_PATH`.

The solution sees INPUT_PATH and OUTPUT_PATH as predefined globals; an uncaught exception
prints its traceback and exits 2. Nothing here confines anything: that is the sandbox's job.
"""

import runpy
import sys
import traceback


def main() -> None:
    solution, input_path, output_path = sys.argv[1:4]
    init = {"INPUT_PATH": input_path, "OUTPUT_PATH": output_path}
    try:
        runpy.run_path(solution, init_globals=init, run_name="__main__")
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(2)


if __name__ == "__main__":
    main()
