"""The five tables Chainlit 2.12's SQLAlchemyDataLayer reads and writes, with a migration and a
self-check. Plain SQLAlchemy Core; nothing here imports Chainlit.

Chainlit ships SQL statements but no schema. The columns below are the union of what its
statements name (chainlit/data/sql_alchemy.py) and what it INSERTs blindly: every non-None key of
Step.to_dict(), Message.to_dict(), Element.to_dict() and Feedback, so `command`, `modes`,
`defaultOpen`, `autoCollapse`, `autoPlay` and `playerConfig` are here although no SELECT names them.

Types are Text, Boolean and Integer only, so one schema serves SQLite and PostgreSQL: Chainlit
binds JSON as already-dumped strings and timestamps as ISO strings, and on PostgreSQL a JSON(B)
column would break its `metadata LIKE` query for favourites.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Boolean, Column, Connection, Integer, MetaData, Table, Text, inspect, text

TABLES = MetaData()

# A mirror, not a hook: Chainlit 2.12's SQLAlchemyDataLayer (the public data layer) creates and
# migrates nothing, and its documentation's schema lacks columns it writes, so the tables are kept
# here. tests/unit/test_chainlit_reach_ins.py runs Chainlit's own writes and reads on them and fails
# on a release that writes a column missing here or stops naming one this has.
# No foreign keys: Chainlit writes children from fire-and-forget tasks in no guaranteed order, and
# its delete_thread removes feedbacks, elements and steps itself before the thread.
Table(
    "users", TABLES,
    Column("id", Text, primary_key=True),
    Column("identifier", Text, nullable=False, unique=True),
    Column("createdAt", Text),
    Column("metadata", Text, nullable=False),
)
Table(
    "threads", TABLES,
    Column("id", Text, primary_key=True),
    Column("createdAt", Text),
    Column("name", Text),
    Column("userId", Text, index=True),
    Column("userIdentifier", Text),
    Column("tags", Text),
    Column("metadata", Text),
)
Table(
    "steps", TABLES,
    Column("id", Text, primary_key=True),
    Column("name", Text),
    Column("type", Text),
    Column("threadId", Text, index=True),
    Column("parentId", Text),
    Column("command", Text),
    Column("modes", Text),
    Column("streaming", Boolean),
    Column("waitForAnswer", Boolean),
    Column("isError", Boolean),
    Column("metadata", Text),
    Column("tags", Text),
    Column("input", Text),
    Column("output", Text),
    Column("createdAt", Text),
    Column("start", Text),
    Column("end", Text),
    Column("generation", Text),
    Column("showInput", Text),  # Chainlit stores "true", "false" or a language name
    Column("defaultOpen", Boolean),
    Column("autoCollapse", Boolean),
    Column("language", Text),
)
Table(
    "elements", TABLES,
    Column("id", Text, primary_key=True),
    Column("threadId", Text, index=True),
    Column("type", Text),
    Column("url", Text),
    Column("chainlitKey", Text),
    Column("name", Text),
    Column("display", Text),
    Column("objectKey", Text, index=True),  # the file route looks elements up by it
    Column("size", Text),
    Column("page", Integer),
    Column("language", Text),
    Column("forId", Text),
    Column("mime", Text),
    Column("props", Text),
    Column("autoPlay", Boolean),
    Column("playerConfig", Text),
)
Table(
    "feedbacks", TABLES,
    Column("id", Text, primary_key=True),
    Column("forId", Text, index=True),
    Column("threadId", Text),
    Column("value", Integer),
    Column("comment", Text),
)

# Columns every Chainlit INSERT carries, so a live NOT NULL on them is harmless (Chainlit's own
# documented schema has some). A NOT NULL anywhere else makes some INSERT fail, and Chainlit only
# logs a warning when that happens.
ALWAYS_WRITTEN: dict[str, frozenset[str]] = {
    "users": frozenset({"id", "identifier", "createdAt", "metadata"}),
    "threads": frozenset({"id"}),
    "steps": frozenset({"id", "name", "type", "threadId", "streaming", "metadata", "generation"}),
    "elements": frozenset({"id", "threadId", "type", "name", "display", "forId"}),
    "feedbacks": frozenset({"id", "forId", "value", "threadId"}),  # the UI sends the step's
}


def migrate(conn: Connection) -> None:
    """Create missing tables, columns and indexes; never drops or alters what is there."""
    TABLES.create_all(conn)
    inspector = inspect(conn)
    quote = conn.dialect.identifier_preparer.quote
    for table in TABLES.sorted_tables:
        live = {c["name"] for c in inspector.get_columns(table.name)}
        for column in table.columns:
            if column.name not in live:
                # Always nullable: old rows have no value, and SQLite refuses NOT NULL without one.
                conn.execute(text(f"ALTER TABLE {quote(table.name)} ADD COLUMN "
                                  f"{quote(column.name)} {column.type.compile(conn.dialect)}"))
        for index in table.indexes:
            index.create(conn, checkfirst=True)


def schema_problems(conn: Connection) -> list[str]:
    """What in the live database would make Chainlit's statements fail; empty when it fits."""
    inspector = inspect(conn)
    present = set(inspector.get_table_names())
    problems: list[str] = []
    for table in TABLES.sorted_tables:
        if table.name not in present:
            problems.append(f"table {table.name} is missing")
            continue
        live = {c["name"]: c for c in inspector.get_columns(table.name)}
        missing = [c.name for c in table.columns if c.name not in live]
        if missing:
            problems.append(f"{table.name} lacks column(s) {', '.join(missing)}")
        if "id" in live and not _id_is_unique(conn, table.name):
            # Every Chainlit write is INSERT ... ON CONFLICT ("id"), which needs it.
            problems.append(f"{table.name}.id is neither its primary key nor unique")
        strict = [name for name, column in live.items()
                  if not column["nullable"] and column.get("default") is None
                  and name not in ALWAYS_WRITTEN[table.name]]
        if strict:
            names = ", ".join(f"{table.name}.{name}" for name in strict)
            problems.append(f"{names} {'is' if len(strict) == 1 else 'are'} NOT NULL but Chainlit "
                            f"may leave {'it' if len(strict) == 1 else 'them'} empty")
    return problems


def _id_is_unique(conn: Connection, table: str) -> bool:
    inspector = inspect(conn)
    if inspector.get_pk_constraint(table).get("constrained_columns") == ["id"]:
        return True
    # An index's columns may be None (an expression); a unique constraint's never are.
    uniques: list[Sequence[str | None]] = [u["column_names"] for u in inspector.get_unique_constraints(table)]
    uniques += [i["column_names"] for i in inspector.get_indexes(table) if i.get("unique")]
    return ["id"] in uniques
