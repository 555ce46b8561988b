"""Whether a registered database can be searched, and if not, why — without a dialog and without loading
a model. The window shows this beside each database; ``recall-gui list`` prints it."""

from __future__ import annotations

from dataclasses import dataclass

from recall_gui.core.browse import TableInfo, describe_table
from recall_gui.core.embedders import model_problem
from recall_gui.core.errors import ColumnError, ConnectError, RecallError
from recall_gui.core.model_detection import no_model_problem
from recall_gui.core.registry import DatabaseEntry
from recall_gui.core.session import Session

#: The checks, in the order a user would fix them.
CHECKS = ("path", "table", "model", "dimension")


@dataclass(frozen=True)
class HealthProblem:
    """One failed check: ``kind`` is one of :data:`CHECKS`, "columns" or "storage"."""

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
        if kind in ("table", "dimension") and self.info is None:
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
    reason = model_problem(entry.embedder)
    if entry.embedder.kind == "unknown" and info is not None:
        message, hint = no_model_problem(entry, info.columns.vector_dim)
        problems.append(HealthProblem("model", message, hint))
    elif reason is not None:
        problems.append(HealthProblem("model", f"model unavailable: {reason}"))
    model_dim = entry.embedder.dim
    if info is not None and model_dim is not None and model_dim != info.columns.vector_dim:
        problems.append(
            HealthProblem(
                "dimension",
                f"dimension mismatch: {entry.embedder.label} gives {model_dim}, "
                f"the table holds {info.columns.vector_dim}",
                "Fix the embedder of this database in the registry.",
            )
        )
    return DatabaseHealth(entry, info, tuple(problems))
