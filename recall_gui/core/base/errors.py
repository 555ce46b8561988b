"""One hierarchy for every failure the core reports to a user.

Each error carries a message (what is wrong, in cosh's wording where cosh has one) and, separately,
a hint (what to do). Front ends decide how to show both; the agent-facing texts stay exact because the
hint never leaks into ``str(error)``.
"""

from __future__ import annotations

from pathlib import Path

from recall_gui.core.base.credentials import masked


class RecallError(Exception):
    """Base class: an expected failure with a message fit for a user."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        # An address in a message may carry a password: masked here, once for every front end.
        message = masked(message)
        super().__init__(message)
        self.message = message
        self.hint = masked(hint) if hint is not None else None

    def __str__(self) -> str:
        return self.message

    def full_text(self) -> str:
        """Message and hint on separate lines, for places that show both."""
        return self.message if not self.hint else f"{self.message}\n{self.hint}"


class InvalidInputError(RecallError):
    """Tool arguments that cannot be used (missing `db_name`, missing `query`, ...)."""


class FilterError(InvalidInputError):
    """A metadata filter (a LanceDB SQL predicate) that cannot be used on a table."""


class DatabaseNotFoundError(RecallError):
    """A database name that the registry does not list among the active databases."""


class ConnectError(RecallError):
    """The database or its table cannot be opened; messages start with cosh's prefix."""

    PREFIX = "failed to connect to vector db: "

    def __init__(self, detail: str, *, hint: str | None = None, kind: str = "storage") -> None:
        super().__init__(self.PREFIX + detail, hint=hint)
        self.detail = masked(detail)
        #: What is missing: "path" (the database folder), "table", "version", or "storage" (anything else).
        self.kind = kind


class DimensionMismatchError(RecallError):
    """The query vector and the table's vector column have different widths."""

    def __init__(self, input_dim: int, table_dim: int, *, hint: str | None = None) -> None:
        super().__init__(
            f"vector dimension mismatch: input has {input_dim}, but table schema has {table_dim}",
            hint=hint,
        )
        self.input_dim = input_dim
        self.table_dim = table_dim


class ColumnError(RecallError):
    """The id, content or vector column of a table cannot be found."""


class FolderError(RecallError):
    """A folder or URI opened by hand holds no LanceDB table that can be read."""


class StorageError(RecallError):
    """Reading the table failed after it was opened (remote storage gone, corrupt files, ...)."""


class ExportError(RecallError):
    """An export file cannot be written."""


class RegistryError(RecallError):
    """A registry file cannot be read, or a change cannot be saved safely."""


class EmbedderError(RecallError):
    """A query could not be embedded."""


class ModelUnavailableError(EmbedderError):
    """A local model is not installed and cannot be fetched."""


class ProviderError(EmbedderError):
    """A cloud embedding provider refused or failed a request."""


class SettingsError(RecallError):
    """One of the app's own settings files cannot be read (not UTF-8, not a file, no permission)."""

    def __init__(self, message: str, *, path: Path, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        #: The file, as the user would look for it.
        self.path = path


class DemoBuildCancelled(RecallError):
    """The user cancelled building the demo knowledge base."""


class OperationCancelled(RecallError):
    """The user cancelled a long operation (a search for near-duplicates, a run of golden checks)."""


class GoldenFileError(InvalidInputError):
    """A golden-check file that cannot be read or does not hold golden checks (the message names the
    file and the position)."""


class DemoConflictError(RecallError):
    """Building the demo would replace a registry entry or a folder that recall-gui did not make."""


class DemoDataError(RecallError):
    """The prebuilt demo shipped with the package is missing or unreadable."""


class ProjectionError(RecallError):
    """A map of a table's vectors cannot be made as asked (too few rows for t-SNE, ...)."""
