"""The first lines the ``snarl`` command runs: the package is imported before the
command's code, so Ctrl-C handling starts here.

Between the start of the interpreter and :func:`snarl.cli.main`, imports take tens of
milliseconds (more on a busy machine, or when modules are compiled on a first run). A
Ctrl-C then would end the command with Python's traceback, or be lost: raised in the
middle of ``compile()``, a KeyboardInterrupt can vanish, and the command runs on. In
the command (never in a program that imports snarl), it ends the process at once with
one line and code 130: nothing has been written yet.
"""

from __future__ import annotations

# The C module of signal: `signal` itself first builds its enums, which takes a while.
import _signal
import os
import sys

EXIT_INTERRUPTED = 130


def guard_command_start_up() -> None:
    """Makes a Ctrl-C during the imports of the ``snarl`` command exit with code 130.

    ``snarl.cli.main`` puts its own handling in place as it starts."""
    # An ignored SIGINT (a background job of a script) stays ignored.
    if _is_command() and _signal.getsignal(_signal.SIGINT) is not _signal.SIG_IGN:
        _signal.signal(_signal.SIGINT, exit_interrupted)


def _is_command() -> bool:
    """Whether this process is the ``snarl`` command: its console script, or
    ``python -m snarl`` (while a ``-m`` package is imported, ``sys.argv[0]`` is ``-m``)."""
    argv = getattr(sys, "argv", None) or [""]
    if os.path.basename(argv[0]) == "snarl":
        return True
    original = list(getattr(sys, "orig_argv", []))
    if argv[0] != "-m" or "-m" not in original:
        return False
    return original[original.index("-m") + 1 :][:1] == ["snarl"]


def exit_interrupted(signum: int, frame: object) -> None:
    """Ends the process at once: one line on stderr, exit code 130 (no exception, which
    the code under way could swallow)."""
    os.write(2, b"snarl: interrupted\n")
    os._exit(EXIT_INTERRUPTED)
