"""What the start-up benchmarks (import_time_benchmark.py, run_startup_benchmark.py) share: which
interpreters they start, and the environment those runs get."""

import os

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def add_interpreter_arguments(parser):
    """--python (repeatable) and --keep-env."""
    parser.add_argument("--python", action="append", help="interpreter to start (repeatable)")
    parser.add_argument("--keep-env", action="store_true",
                        help="keep PYTHONDONTWRITEBYTECODE in the runs' environment")


def interpreters(args):
    """args.python, or the torch 2.x venv's and Debian's interpreters, those that exist."""
    return args.python or [p for p in (os.path.join(REPO, ".venv", "bin", "python"), "/usr/bin/python3")
                           if os.path.exists(p)]


def drop_bytecode_switch(env, args):
    """Removes PYTHONDONTWRITEBYTECODE from `env` unless --keep-env: without .pyc files every run
    would compile stepscope's modules again, which an installed package never does."""
    if not args.keep_env and env.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
        print("PYTHONDONTWRITEBYTECODE removed from the runs' environment (--keep-env keeps it)")
