"""Entry script of the PyInstaller build: the same `recall-gui` command as the pip-installed one."""

import multiprocessing
import sys

from recall_gui.cli import main

if __name__ == "__main__":
    # The filter guard's worker is a spawned process: in a frozen build it re-enters this script.
    multiprocessing.freeze_support()
    sys.exit(main())
