"""LanceDB folders that cosh did not register, made the way other tools make them: opened read-only,
browsed, searched with the model the table says (or the one its width allows), and registered for agents.

Each kind of folder is opened, browsed, searched and registered, and its files are the same afterwards
(size, mtime and hash of every file).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from recall_gui.core.base.errors import FolderError, InvalidInputError, ModelUnavailableError, RecallError
from recall_gui.core.registry.registry import load_registry
from recall_gui.core.registry.registry_types import EmbedderSpec
from recall_gui.core.search.harness import Harness
from recall_gui.core.search.health import check_health
from recall_gui.core.session.session import Session
from recall_gui.core.tables.browse import fetch_page
from recall_gui.core.tables.folders import OpenedTable, open_table, opened_entry, place_of, read_folder
from recall_gui.core.tables.model_detection import NO_MODEL
from recall_gui.core.tables.registration import Registration, register_table
from tests.foldertools import write_lancedb_registry_table, write_langchain_table, write_wide_table
from tests.kbtools import PASSAGES, cosh_entry, snapshot_tree, write_lance_table, write_registry

T = TypeVar("T")
MINILM = EmbedderSpec("local", "AllMiniLML6V2")


@pytest.fixture(scope="module")
def shared_session() -> Iterator[Session]:
    """One session for the module: the model loads once, not once per test."""
    session = Session()
    yield session
    asyncio.run(session.aclose())


def run(call: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(call())  # type: ignore[arg-type]


async def first_hit(session: Session, registry_dir: Path, opened: OpenedTable, query: str) -> Any:
    harness = Harness(registry_dir, session=session)
    report = await harness.search_database(opened.entry, query, 3)
    return report.result.hits


def register(session: Session, registry_dir: Path, entry: Any, request: Registration) -> Any:
    return run(lambda: register_table(session, registry_dir, entry, request))


def registered_copy_matches(session: Session, registry_dir: Path, opened: OpenedTable, name: str) -> None:
    """The registered copy, searched as an agent searches it, gives exactly what the opened table gave."""

    async def both() -> tuple[Any, Any]:
        harness = Harness(registry_dir, session=session)
        direct = await harness.search_database(opened.entry, "What is the capital of France?", 4)
        agent = await harness.run({"db_name": name, "query": "What is the capital of France?", "limit": 4})
        return direct.result.hits, agent.result.hits

    direct, agent = run(both)
    assert [(h.id, h.content, h.distance) for h in direct] == [(h.id, h.content, h.distance) for h in agent]


def test_a_table_written_by_lancedbs_embedding_registry_names_its_model(
    shared_session: Session, passage_vectors: Any, tmp_path: Path
) -> None:
    db = tmp_path / "lancedb-api"
    write_lancedb_registry_table(db, "docs", passage_vectors, model="all-MiniLM-L6-v2")
    before = snapshot_tree(db)

    opened = run(lambda: open_table(shared_session, str(db)))
    table = opened.table
    assert (table.name, table.row_count) == ("docs", 12)
    assert table.columns is not None
    assert (table.columns.id, table.columns.content, table.columns.vector) == (None, "text", "vector")
    assert opened.entry.embedder == MINILM
    assert opened.entry.origin == "opened"
    assert opened.entry.model_reason == "from the table's metadata (sentence-transformers all-MiniLM-L6-v2)"

    page = run(lambda: fetch_page(shared_session, opened.entry.target, offset=0, limit=3))
    assert [row.content for row in page.rows] == list(PASSAGES.values())[:3]
    hits = run(lambda: first_hit(shared_session, tmp_path / "no-registry", opened, "capital of France"))
    assert hits[0].content == PASSAGES["paris"]

    registry = tmp_path / "registry"
    request = Registration("docs", "Notes kept by LanceDB's embedding API", MINILM)
    done = register(shared_session, registry, opened.entry, request)
    assert done.raw["uri"] == str(db.resolve())
    assert done.raw["embedder"] == {"Local": {"model": "AllMiniLML6V2"}}
    assert done.raw["content_column"] == "text" and "id_column" not in done.raw and "table" not in done.raw
    assert load_registry(registry).get("docs") is not None
    assert json.loads((registry / "rag_active.json").read_text()) == ["docs"]
    registered_copy_matches(shared_session, registry, opened, "docs")
    assert snapshot_tree(db) == before


def test_a_langchain_table_gets_the_local_model_of_its_width(
    shared_session: Session, passage_vectors: Any, tmp_path: Path
) -> None:
    db = tmp_path / "langchain"
    write_langchain_table(db, "vectorstore", passage_vectors)
    before = snapshot_tree(db)

    opened = run(lambda: open_table(shared_session, str(db)))
    assert opened.entry.embedder == MINILM
    assert opened.entry.model_reason == "by width: the only local model of 384 dimensions available"
    columns = opened.table.columns
    assert columns is not None and (columns.id, columns.content) == ("id", "text")

    page = run(lambda: fetch_page(shared_session, opened.entry.target, offset=2, limit=1))
    (row,) = page.rows
    assert row.id == "lc-paris" and row.extra["metadata"] == {"source": "notes/paris.md", "page": 2}
    hits = run(lambda: first_hit(shared_session, tmp_path / "none", opened, "How do I change my password?"))
    assert hits[0].id == "lc-pw-reset"

    registry = write_registry(tmp_path / "registry", [cosh_entry("other", "/x/other")])
    raw_before = json.loads((registry / "rag_dbs.json").read_text())
    raw_before["dbs"][0]["added_by_cosh_later"] = {"keep": True}
    raw_before["schema_version"] = 7
    (registry / "rag_dbs.json").write_text(json.dumps(raw_before, indent=2))
    request = Registration("my-notes", "LangChain notes", MINILM, active=False)
    done = register(shared_session, registry, opened.entry, request)
    assert done.raw["table"] == "vectorstore" and done.raw["content_column"] == "text"
    assert len(done.notes) == 2 and "vectorstore" in done.notes[0]
    written = json.loads((registry / "rag_dbs.json").read_text())
    assert written["schema_version"] == 7
    assert written["dbs"][0]["added_by_cosh_later"] == {"keep": True}
    assert [db["name"] for db in written["dbs"]] == ["other", "my-notes"]
    assert json.loads((registry / "rag_active.json").read_text()) == ["other"]  # not activated
    entry = load_registry(registry).get("my-notes")
    assert entry is not None and not entry.active

    async def registered_search() -> str:
        report = await Harness(registry, session=shared_session).search_database(entry, "France", 1)
        return report.result.hits[0].id

    assert run(registered_search) == "lc-paris"
    assert snapshot_tree(db) == before


def test_two_tables_in_one_folder_are_listed_and_one_is_chosen(
    shared_session: Session, passage_vectors: Any, tmp_path: Path
) -> None:
    db = tmp_path / "two"
    write_lance_table(db, "alpha", tuple(PASSAGES), tuple(PASSAGES.values()), passage_vectors)
    write_langchain_table(db, "beta", passage_vectors[:5])
    before = snapshot_tree(db)

    folder = run(lambda: read_folder(shared_session, place_of(str(db))))
    assert [(t.name, t.row_count) for t in folder.tables] == [("alpha", 12), ("beta", 5)]
    with pytest.raises(InvalidInputError, match=r"holds 2 tables \(alpha, beta\)") as caught:
        run(lambda: open_table(shared_session, str(db)))
    assert caught.value.hint == "Name the one to open with --table."
    with pytest.raises(FolderError, match=r'table "gamma" not found .* \(tables there: alpha, beta\)'):
        run(lambda: open_table(shared_session, str(db), table="gamma"))

    beta = run(lambda: open_table(shared_session, str(db), table="beta"))
    assert beta.table.row_count == 5
    by_table_folder = run(lambda: open_table(shared_session, str(db / "alpha.lance")))
    assert by_table_folder.entry.table_name == "alpha" and by_table_folder.entry.uri == str(db.resolve())
    hits = run(lambda: first_hit(shared_session, tmp_path / "none", by_table_folder, "Moon and the sea"))
    assert hits[0].id == "tides"

    registry = tmp_path / "registry"
    for opened, name in ((beta, "beta"), (by_table_folder, "alpha")):
        request = Registration(name, f"{name} table", MINILM)
        register(shared_session, registry, opened.entry, request)
    assert [db.name for db in load_registry(registry).active] == ["beta", "alpha"]
    registered_copy_matches(shared_session, registry, by_table_folder, "alpha")
    assert snapshot_tree(db) == before


@pytest.mark.process
def test_a_folder_on_s3_opens_with_the_registrys_storage_options(
    shared_session: Session, passage_vectors: Any, s3: Any, tmp_path: Path
) -> None:
    import boto3

    from tests.s3server import SECRET_KEY, environment, upload_tree

    local = tmp_path / "to-upload"
    write_lancedb_registry_table(local, "docs", passage_vectors, model="all-MiniLM-L6-v2")
    options = s3.storage_options()
    client = boto3.client(
        "s3",
        endpoint_url=s3.endpoint,
        aws_access_key_id=options["aws_access_key_id"],
        aws_secret_access_key=SECRET_KEY,
        region_name="us-east-1",
    )
    upload_tree(client, s3.bucket, local, "team/kb")
    keys_before = sorted((o["Key"], o["ETag"]) for o in client.list_objects_v2(Bucket=s3.bucket)["Contents"])
    uri = s3.uri("team", "kb")

    opened = run(lambda: open_table(shared_session, uri, storage_options=options))
    assert (opened.entry.uri, opened.table.row_count, opened.entry.embedder) == (uri, 12, MINILM)
    assert opened.entry.model_reason.startswith("from the table's metadata")
    page = run(
        lambda: fetch_page(shared_session, opened.entry.target, offset=0, limit=12, filter_text="moon")
    )
    assert [row.content for row in page.rows] == [PASSAGES["tides"]]
    hits = run(lambda: first_hit(shared_session, tmp_path / "none", opened, "capital of Germany"))
    assert hits[0].content == PASSAGES["berlin"]

    registry = tmp_path / "registry"
    request = Registration("team-kb", "The team's notes on S3", MINILM)
    done = register(shared_session, registry, opened.entry, request)
    assert done.raw["uri"] == uri and done.raw["table"] == "docs"
    assert done.raw["storage_options"] == {
        k: options[k] for k in ("aws_endpoint", "aws_region", "allow_http")
    }
    assert done.notes[0].startswith(
        "the credentials (aws_access_key_id, aws_secret_access_key) were not written to the registry"
    )
    assert SECRET_KEY not in (registry / "rag_dbs.json").read_text()
    credentials = {"AWS_ACCESS_KEY_ID": options["aws_access_key_id"], "AWS_SECRET_ACCESS_KEY": SECRET_KEY}
    with environment(credentials):  # where cosh and the MCP server get them
        registered_copy_matches(shared_session, registry, opened, "team-kb")
    with pytest.raises(FolderError, match=r"no LanceDB table in s3://"):
        run(lambda: open_table(shared_session, s3.uri("team", "elsewhere"), storage_options=options))
    keys_after = sorted((o["Key"], o["ETag"]) for o in client.list_objects_v2(Bucket=s3.bucket)["Contents"])
    assert keys_after == keys_before  # nothing was written to the bucket


def test_a_folder_without_tables_is_refused_and_points_at_the_one_with_tables(
    shared_session: Session, passage_vectors: Any, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    write_lance_table(project / ".lancedb", "notes", ("a",), ("text",), passage_vectors[:1])
    before = snapshot_tree(project)
    with pytest.raises(FolderError) as caught:
        run(lambda: open_table(shared_session, str(project)))
    assert caught.value.message == f"no LanceDB table in {project.resolve()}"
    assert (
        caught.value.hint
        == f"LanceDB tables are in {project.resolve() / '.lancedb'}: open that folder instead."
    )

    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FolderError, match="no LanceDB table in"):
        run(lambda: read_folder(shared_session, place_of(str(empty))))
    registry = tmp_path / "registry"
    entry = opened_entry_for(empty)
    with pytest.raises(FolderError, match="no LanceDB table in"):
        register(shared_session, registry, entry, Registration("x", "", MINILM))
    assert not registry.exists()

    missing = tmp_path / "typo"
    with pytest.raises(FolderError, match=f"folder {missing} does not exist"):
        run(lambda: open_table(shared_session, str(missing)))
    assert not missing.exists()  # LanceDB would have created it
    assert list(empty.iterdir()) == [] and snapshot_tree(project) == before


def opened_entry_for(folder: Path) -> Any:
    """An opened entry whose folder has since lost its table (registering must notice)."""
    from recall_gui.core.storage.columns import ColumnMapping
    from recall_gui.core.tables.folders import Folder, FolderTable, Place
    from recall_gui.core.tables.model_detection import chosen

    table = FolderTable("gone", 1, ColumnMapping("id", "content", "vector", 384), chosen(MINILM))
    return opened_entry(Folder(Place(str(folder)), (table,)), table)


def test_a_width_no_local_model_has_browses_and_search_says_why_not(
    shared_session: Session, passage_vectors: Any, tmp_path: Path
) -> None:
    db = tmp_path / "wide"
    write_wide_table(db, "wide", 1000, list(PASSAGES.values()))
    before = snapshot_tree(db)

    opened = run(lambda: open_table(shared_session, str(db)))
    assert opened.entry.embedder == NO_MODEL
    assert opened.entry.model_reason == "no local model of 1000 dimensions is available here"
    page = run(lambda: fetch_page(shared_session, opened.entry.target, offset=0, limit=20))
    assert len(page.rows) == 12

    with pytest.raises(ModelUnavailableError) as caught:
        run(lambda: first_hit(shared_session, tmp_path / "none", opened, "anything"))
    assert caught.value.message == (
        "cannot search wide without a model: no local model of 1000 dimensions is available here"
    )
    assert caught.value.hint is not None
    assert caught.value.hint.startswith(
        "The table can still be browsed. No model recall-gui knows gives 1000-dimensional vectors"
    )
    health = run(lambda: check_health(shared_session, opened.entry))
    assert health.info is not None and [p.kind for p in health.problems] == ["model"]

    with pytest.raises(InvalidInputError, match='gives 384-dimensional vectors, but table "wide" holds 1000'):
        run(lambda: open_table(shared_session, str(db), model="AllMiniLML6V2"))
    registry = tmp_path / "registry"
    for spec, expected in (
        (NO_MODEL, "no model chosen"),
        (MINILM, "gives 384-dimensional vectors"),
    ):
        with pytest.raises(RecallError, match=expected):
            register(shared_session, registry, opened.entry, Registration("wide", "", spec))
    assert not registry.exists()
    # A cloud model whose width nobody knows is taken at the table's width (as cosh's harness does).
    in_house = EmbedderSpec("cloud", "in-house-embedder", "ollama")
    named = run(lambda: open_table(shared_session, str(db), model="ollama/in-house-embedder"))
    assert (named.entry.embedder, named.entry.model_reason) == (in_house, "chosen by you")
    done = register(shared_session, registry, named.entry, Registration("wide", "", in_house))
    assert done.raw["embedder"] == {"Cloud": {"provider": "ollama", "model": "in-house-embedder"}}
    assert snapshot_tree(db) == before


def test_registering_refuses_a_taken_name_and_a_registry_that_does_not_parse(
    shared_session: Session, passage_vectors: Any, tmp_path: Path
) -> None:
    db = tmp_path / "db"
    write_langchain_table(db, "notes", passage_vectors)
    opened = run(lambda: open_table(shared_session, str(db)))
    registry = write_registry(tmp_path / "registry", [cosh_entry("notes", "/x/notes")])
    files_before = snapshot_tree(registry)
    for name, expected in (
        ("notes", 'not registered: a database called "notes" is already registered'),
        ("", "not registered: the name is empty"),
        (" notes2", "not registered: the name starts or ends with a space"),
    ):
        with pytest.raises(InvalidInputError) as caught:
            register(shared_session, registry, opened.entry, Registration(name, "", MINILM))
        assert caught.value.message == expected
    assert snapshot_tree(registry) == files_before

    (registry / "rag_dbs.json").write_text('{"dbs": [', encoding="utf-8")
    broken = snapshot_tree(registry)
    with pytest.raises(RecallError, match=r"rag_dbs\.json: is not valid JSON"):
        register(shared_session, registry, opened.entry, Registration("n2", "", MINILM))
    assert snapshot_tree(registry) == broken

    # An active list that is no list: refused before the entry is written, not after (half a registration)
    write_registry(registry, [cosh_entry("notes", "/x/notes")])
    (registry / "rag_active.json").write_text("{}", encoding="utf-8")
    odd = snapshot_tree(registry)
    for active in (True, False):
        with pytest.raises(RecallError, match=r"not saved: .*rag_active\.json is not a JSON array"):
            register(shared_session, registry, opened.entry, Registration("n3", "", MINILM, active=active))
        assert snapshot_tree(registry) == odd
