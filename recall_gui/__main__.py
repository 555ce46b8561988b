"""`python -m recall_gui` behaves exactly like the `recall-gui` command."""

import sys

from recall_gui.cli import main

sys.exit(main())
