"""Entry script of the PyInstaller build: the same `recall-gui` command as the pip-installed one."""

import sys

from recall_gui.cli import main

sys.exit(main())
