"""Running the ``fdbench`` command: one line and exit status 2 for a user's error, one line and
exit status 130 on Ctrl-C."""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import warnings

import typer

# the commands register themselves on ``app`` when imported, listed in this order by --help
# isort: off
import fdbench.cli.evaluate
import fdbench.cli.benchmark
import fdbench.cli.zoo
import fdbench.cli.report
import fdbench.cli.data  # noqa: F401

# isort: on
from fdbench.cli.app import _interrupted_message, app

_SIGINT = threading.Event()


def _on_sigint(signum: int, frame: object) -> None:
    _SIGINT.set()
    raise KeyboardInterrupt


def _exit_interrupted() -> None:
    """Ctrl-C: one line (jobs finished, how to resume) and exit status 130; nothing else is
    printed while the workers shut down."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")
    sys.stdout.flush()
    print(_interrupted_message(), file=sys.stderr, flush=True)
    # no interpreter shutdown: dask's exit hooks would report the cluster closed under them
    os._exit(130)


def main() -> None:
    """Run the ``fdbench`` command line.

    User errors (:func:`fdbench.core.errors.is_user_error`: invalid inputs, files and settings,
    every ``OSError``; and bad options or arguments) print ``fdbench: error: <one line>`` and
    exit with status 2, also when raised inside a dask worker; anything else is a bug and keeps its
    traceback, as does every error with ``FDBENCH_DEBUG`` set. Ctrl-C prints one line, how
    many jobs finished and that the same command resumes, and exits with status 130.
    """
    try:  # typer >= 0.20 vendors click
        from typer._click import exceptions as click
    except ImportError:
        from click import exceptions as click

    from fdbench.core.errors import is_user_error, one_line

    signal.signal(signal.SIGINT, _on_sigint)
    # the resource tracker (a process of its own, started with these options) would warn on
    # Ctrl-C about the semaphores of worker pools that the exit leaves to it to remove
    sys.warnoptions.append("ignore::UserWarning:multiprocessing.resource_tracker")
    try:
        code = app(standalone_mode=False)
    except click.NoArgsIsHelpError as error:
        error.show()
        sys.exit(error.exit_code)
    except click.UsageError as error:
        # a bad option or argument (unknown option, value of the wrong type, missing argument)
        message = " ".join(error.format_message().split())
        print(f"fdbench: error: {message}", file=sys.stderr)
        sys.exit(2)
    except typer.Abort:
        print("Aborted!", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        _exit_interrupted()
    except SystemExit:
        # Lightning answers Ctrl-C during training with sys.exit(1)
        if _SIGINT.is_set():
            _exit_interrupted()
        raise
    except Exception as error:
        if os.environ.get("FDBENCH_DEBUG") or not is_user_error(error):
            raise
        print(f"fdbench: error: {one_line(error)}", file=sys.stderr)
        sys.exit(2)
    if _SIGINT.is_set():  # typer turns KeyboardInterrupt into exit status 130
        _exit_interrupted()
    if isinstance(code, int) and code:
        sys.exit(code)
