"""Whether a registered database can be searched, and if not, why — without a dialog and without loading
a model. The window shows this beside each database; ``recall-gui list`` prints it.

The checks are the search's own: the table is opened and its columns resolved as a search does, the
query LanceDB would run is planned (so a vector type or metric it refuses is found), one row is made a
hit, and the model is looked for where loading it would look.
"""

from __future__ import annotations

from dataclasses import dataclass

from recall_gui.core.base.errors import ColumnError, ConnectError, RecallError
from recall_gui.core.registry.registry_types import DatabaseEntry
from recall_gui.core.search.nearest import check_searchable
from recall_gui.core.session.session import Session
from recall_gui.core.tables.browse import TableInfo, describe_table
from recall_gui.core.tables.model_detection import no_model_problem

#: The checks, in the order a user would fix them.
CHECKS = ("path", "table", "columns", "search", "model", "dimension")


@dataclass(frozen=True)
class HealthProblem:
    """One failed check: ``kind`` is one of :data:`CHECKS` or "storage"."""

    kind: str
    message: str
    hint: str | None = None


@dataclass(frozen=True)
class DatabaseHealth:
    entry: DatabaseEntry
    info: TableInfo | None
    problems: tuple[HealthProblem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def searchable(self) -> bool:
        return self.info is not None and self.ok

    def status(self, kind: str) -> str:
        """ "ok", "failed" or "unknown" (an earlier check failed) for one of :data:`CHECKS`."""
        if any(p.kind == kind for p in self.problems):
            return "failed"
        if kind in ("table", "columns", "search", "dimension") and self.info is None:
            return "unknown"
        return "ok"

    @property
    def summary(self) -> str:
        return "ok" if self.ok else "; ".join(p.message for p in self.problems)


async def check_health(session: Session, entry: DatabaseEntry) -> DatabaseHealth:
    problems: list[HealthProblem] = []
    info: TableInfo | None = None
    try:
        info = await describe_table(session, entry.target)
    except ConnectError as error:
        problems.append(HealthProblem(error.kind, error.detail, error.hint))
    except ColumnError as error:
        problems.append(HealthProblem("columns", error.message, error.hint))
    except RecallError as error:
        problems.append(HealthProblem("storage", error.message, error.hint))
    if info is not None:
        problem = await _search_problem(session, entry)
        if problem is not None:
            problems.append(problem)
    model_dim = entry.embedder.dim
    if entry.origin == "opened" and entry.embedder.kind == "unknown" and info is not None:
        message, hint = no_model_problem(entry, info.columns.vector_dim)  # no model fits its width
        problems.append(HealthProblem("model", message, hint))
    elif info is not None and model_dim is not None and model_dim != info.columns.vector_dim:
        problems.append(
            HealthProblem(
                "dimension",
                f"dimension mismatch: {entry.embedder.label} gives {model_dim}, "
                f"the table holds {info.columns.vector_dim}",
                "Fix the embedder of this database in the registry.",
            )
        )
    else:  # a model of another width is the wrong model: whether it could load is beside the point
        model = await session.models.problem(entry.embedder)
        if model is not None:
            problems.append(HealthProblem("model", f"model unavailable: {model.message}", model.hint))
    return DatabaseHealth(entry, info, tuple(problems))


async def _search_problem(session: Session, entry: DatabaseEntry) -> HealthProblem | None:
    """What makes every search of ``entry``'s table fail, whatever the query."""
    try:
        await check_searchable(session, entry.target)
    except RecallError as error:
        return HealthProblem("search", f"cannot be searched: {error.message}", error.hint)
    except Exception as error:  # a search would raise it too: say so here, where nothing was asked yet
        return HealthProblem(
            "search",
            f"cannot be searched: a search fails with {type(error).__name__}: {error}",
            "This is a bug in recall-gui; please report it with the table's schema.",
        )
    return None
