"""Golden checks as a JUnit XML report, the format CI systems show as test results.

One ``<testsuite>`` holds one ``<testcase>`` per check (named by database and query); a check that missed
an expected id has a ``<failure>`` listing each expected id with its rank or "missing"; a check that could
not run has an ``<error>``. The file is written atomically: a CI job never reads half a report. Text from
the golden file, the registry or a table is written escaped (:func:`printable`): XML can hold no control
character, and a CI log shows the report's text.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from xml.etree import ElementTree

from recall_gui.core.base.atomic import write_text_atomic
from recall_gui.core.base.control_chars import printable
from recall_gui.core.base.output_paths import refuse_output
from recall_gui.core.golden.checks import CheckOutcome, CheckRun


def _case_name(outcome: CheckOutcome) -> str:
    check = outcome.check
    where = outcome.searched or check.named
    return printable(f"{where}: {json.dumps(check.query, ensure_ascii=False)} (limit {check.limit})")


def _ranks(outcome: CheckOutcome) -> str:
    lines = [
        f"{printable(expected.label)}: {'missing' if expected.rank is None else f'rank {expected.rank}'}"
        for expected in outcome.expected
    ]
    said = outcome.repeats.sentence()
    return "\n".join(lines if said is None else [*lines, printable(said)])


def junit_xml(run: CheckRun, suite: str) -> str:
    """The report as text: ``tests``, ``failures`` and ``errors`` counts, one case per check."""
    root = ElementTree.Element(
        "testsuite",
        name=printable(suite),
        tests=str(len(run.outcomes)),
        failures=str(run.failed),
        errors=str(run.errors),
        skipped="0",
    )
    for outcome in run.outcomes:
        case = ElementTree.SubElement(
            root,
            "testcase",
            name=_case_name(outcome),
            classname=printable(outcome.searched or outcome.check.named),
        )
        if outcome.error is not None:
            error = ElementTree.SubElement(case, "error", message=printable(outcome.error))
            error.text = printable(outcome.hint or outcome.error)
        elif not outcome.passed:
            missing = [expected.label for expected in outcome.expected if expected.rank is None]
            failure = ElementTree.SubElement(
                case,
                "failure",
                message=printable(f"missing from the top {outcome.check.limit}: {', '.join(missing)}"),
                type="MissingExpectedId",
            )
            failure.text = _ranks(outcome)
        else:
            ElementTree.SubElement(case, "system-out").text = _ranks(outcome)
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"


def write_junit(run: CheckRun, suite: str, path: Path, inputs: Iterable[tuple[str, Path]] = ()) -> None:
    """Write the report to ``path`` atomically (raises ``OSError`` when it cannot be written); a path
    that is not a file to write, or is one of the run's ``inputs``, is refused (:class:`OutputRefused`)."""
    refuse_output(path, inputs=inputs, what="the JUnit report")
    write_text_atomic(path, junit_xml(run, suite))
