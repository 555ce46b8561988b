"""A skipped test is a check that did not run: the run fails on a skip whose reason is not allowed.

The allowed reasons are listed in the file the ``allowed_skips`` ini option names (tests/allowed_skips.txt),
one reason a line, each after a comment that says why it may skip. A line matches a skip whose reason
starts with it. Everything else that skips (a missing tool, a missing library, a check that found its
situation impossible) fails the run, with the reasons printed, so it is installed, fixed or listed
knowingly. tests/conftest.py takes these hooks in; tests/core/test_skip_gate.py runs them on a tiny suite.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ALLOWED_SKIPS_INI = "allowed_skips"


class SkipGate:
    """The run's skips whose reason is not allowed (which test, and why); a plugin for one run."""

    def __init__(self, allowed: tuple[str, ...], listed_in: str) -> None:
        self.allowed = allowed
        self.listed_in = listed_in
        self.unlisted: list[tuple[str, str]] = []

    def note(self, report: pytest.TestReport | pytest.CollectReport) -> None:
        if not report.skipped or hasattr(report, "wasxfail"):  # an expected failure is not a skip
            return
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        if not any(reason.startswith(allowed) for allowed in self.allowed):
            self.unlisted.append((report.nodeid, reason))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.note(report)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        self.note(report)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.unlisted and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.unlisted:
            return
        terminalreporter.section("skips that are not allowed", sep="=", red=True, bold=True)
        for where, reason in self.unlisted:
            terminalreporter.line(f"{where}: {reason}")
        terminalreporter.line(
            "A skipped test is a check that did not run: install what it needs, fix it, or list its reason "
            f"in {self.listed_in} with a comment saying why it may skip."
        )


def read_allowed(path: Path) -> tuple[str, ...]:
    """The reasons in ``path``: its lines that are neither blank nor comments (``#``)."""
    if not path.is_file():
        raise pytest.UsageError(f"{path} (the {ALLOWED_SKIPS_INI} ini option) does not exist: create it")
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return tuple(line for line in lines if line and not line.startswith("#"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(ALLOWED_SKIPS_INI, "file of the skip reasons allowed (others fail the run)", default="")


def pytest_configure(config: pytest.Config) -> None:
    name = str(config.getini(ALLOWED_SKIPS_INI))
    if name:
        config.pluginmanager.register(SkipGate(read_allowed(config.rootpath / name), name), "skip_gate")
