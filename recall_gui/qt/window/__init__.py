"""The main window's parts, each with one job (docs/ARCHITECTURE.md lists them).

``qt/main_window.py``'s ``MainWindow`` builds the banner, the pages and the status bar and composes these:
``start_up`` (the start, in its order, and the demo), ``registry_reading`` (the one registry snapshot,
read again after F5, an edit or another program's change, and the databases' health), ``menus``
(the actions, their shortcuts and the menu bar) and ``first_frame`` (what is drawn before the pages).
"""
