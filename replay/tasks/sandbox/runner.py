"""Runs inside the sandbox: `runner.py SOLUTION INPUT_PATH OUTPUT_PATH [NPROC]`.

NPROC, when given, becomes RLIMIT_NPROC here, inside bubblewrap's user namespace, where it
counts this run's processes only (set on bwrap itself it would count all of the user's).

The solution sees INPUT_PATH and OUTPUT_PATH as predefined globals; an uncaught exception
prints its traceback and exits 2. Nothing here confines anything: that is the sandbox's job.
"""

import resource
import runpy
import sys
import traceback


def main() -> None:
    solution, input_path, output_path = sys.argv[1:4]
    if len(sys.argv) > 4:
        nproc = int(sys.argv[4])
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
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
