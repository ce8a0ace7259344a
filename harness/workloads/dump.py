"""A DBA's own schema and data: a mysqldump file (plain or gzip) loaded as a dataset,
then snapshotted like every dataset, for a ``replay`` of their captured statements.

```yaml
dataset: {kind: dump, database: shop, file: shop.sql.gz, threads: 2}
workload: {kind: replay, database: shop, log: captured-slow.log}
```

The dump is streamed (never read whole) and loaded fast: each table's INSERTs go to one
of ``threads`` connections (tables load side by side, each in its order), with unique
and foreign key checks off as mysqldump's header asks; a table's secondary indexes are
left out of its CREATE TABLE and added in one ALTER TABLE after its rows (not for a
table with foreign keys, which need them). Views, triggers, routines and events come
after every row and index, each without its DEFINER (the harness's account owns them),
so that no trigger fires during the load.

What does not belong in a sandbox is not run, and is counted by reason in the prepare
summary (``skipped``): ``SET @@GLOBAL.GTID_PURGED`` (the source's GTID history) and other
global settings, ``SQL_LOG_BIN``, ``LOCK``/``UNLOCK TABLES``, ``CHANGE MASTER``/``CHANGE
REPLICATION SOURCE``, ``CREATE DATABASE`` and ``USE`` of the dump's own database (it is
loaded into ``database``), and ``DISABLE``/``ENABLE KEYS``. A dump of two databases, or
any other statement, is refused before the first row, naming the line.

``file`` may also be a directory as ``mysqldump --tab`` writes it (or a masking pipeline):
per table a ``TABLE.sql`` with its CREATE TABLE (and triggers) and a data file beside it,
``TABLE.txt`` or ``.tsv`` (mysqldump's default: tab-separated, backslash escapes, ``\\N``
for NULL) or ``TABLE.csv`` (comma-separated, fields optionally in double quotes, as
``--fields-terminated-by=, --fields-optionally-enclosed-by='"'`` writes). The .sql files
are read as a dump is (the same refusals); each data file is loaded with ``LOAD DATA
LOCAL INFILE`` on one of ``threads`` connections, so the server must allow it (MySQL
8.0+ does not by default: ``prepare_mysqld: {local_infile: 1}``); the warnings it gave
are counted per table.
"""
from __future__ import annotations

import gzip
import queue
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal, cast

import pymysql
from pydantic import Field

from ..errors import HarnessError, InputError
from ..jsonvalue import JsonDict
from ..model import DatasetModel, WorkloadModel
from ..server.mysql import Endpoint, connection, query
from ..store.prepared import Prepared
from .base import RunContext, WorkloadPlugin

_VERSIONED = re.compile(r"/\*M?!\d*\s?(.*?)\s?\*/", re.S)  # /*!50001 ...*/, /*M!100101 ...*/
# MariaDB 10.5.25+/11.x dumps open with the client's sandbox mode, a line of its own.
_SANDBOX_MODE = re.compile(r"/\*M?!999999\\- enable the sandbox mode \*/")
_DEFINER = re.compile(r"\s*DEFINER\s*=\s*(`[^`]*`|'[^']*'|\S+?)@(`[^`]*`|'[^']*'|\S+)", re.I)
_NAME = r"`((?:[^`]|``)+)`|(\w+)"
_INSERT = re.compile(r"(?:INSERT|REPLACE)\s+(?:IGNORE\s+)?INTO\s+(?:" + _NAME + r")", re.I)
_CREATE_TABLE = re.compile(r"CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(?:" + _NAME + r")",
                           re.I)
_SECONDARY = re.compile(r"\s*(UNIQUE\s+KEY|KEY|FULLTEXT\s+KEY|SPATIAL\s+KEY)\s", re.I)
_OBJECT = re.compile(r"(CREATE|DROP)\s+(?:\w+=\S+\s+|SQL\s+SECURITY\s+\w+\s+|OR\s+REPLACE\s+)*"
                     r"(?:IF\s+EXISTS\s+)?(VIEW|TRIGGER|PROCEDURE|FUNCTION|EVENT)\b", re.I)
_DB = re.compile(r"(?:CREATE\s+DATABASE\s+(?:IF\s+NOT\s+EXISTS\s+)?|USE\s+)(?:" + _NAME + ")",
                 re.I)
QUEUE = 64  # INSERT statements waiting per connection (each up to a packet)
# A --tab directory's data files, by suffix: how LOAD DATA reads them.
DATA_FORMATS = {
    ".txt": "",  # LOAD DATA's defaults are mysqldump --tab's
    ".tsv": "",
    ".csv": "FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' ESCAPED BY '\\\\'",
}

# (pattern on the statement as the server reads it, why it is not run)
SKIPPED = (
    (re.compile(r"SET\s+@@GLOBAL\.GTID_PURGED", re.I), "SET @@GLOBAL.GTID_PURGED (the "
     "source's GTID history)"),
    (re.compile(r"SET\s+@@(SESSION\.)?SQL_LOG_BIN", re.I), "SET SQL_LOG_BIN (it needs SUPER; "
     "the sandbox's binary log is not the point)"),
    (re.compile(r"SET\s+(GLOBAL\s|@@GLOBAL\.|PERSIST)", re.I), "SET of a global setting"),
    (re.compile(r"(LOCK|UNLOCK)\s+TABLES", re.I), "LOCK/UNLOCK TABLES (the load is alone)"),
    (re.compile(r"CHANGE\s+(MASTER|REPLICATION\s+SOURCE)|(START|STOP)\s+(SLAVE|REPLICA)",
                re.I), "replication (CHANGE MASTER and friends)"),
    (re.compile(r"ALTER\s+TABLE\s+\S+\s+(DISABLE|ENABLE)\s+KEYS", re.I),
     "DISABLE/ENABLE KEYS (MyISAM's; InnoDB ignores it)"),
)


class DumpDataset(DatasetModel):
    """A mysqldump file (plain or gzip; relative to the scenario file), or a directory
    of one as ``mysqldump --tab`` writes it, loaded into ``database``, its tables
    ``threads`` at a time."""

    kind: Literal["dump"]
    file: str
    threads: int = Field(2, ge=1, le=64)

    def files(self) -> dict[str, str]:
        return {"file": self.file}

    def folders(self) -> set[str]:
        return {"file"}  # a directory as mysqldump --tab writes it


@dataclass
class Statement:
    line: int  # where it starts in the file
    text: str  # as written (versioned comments and all)

    @property
    def plain(self) -> str:
        """What the server reads of it: versioned comments opened, leading space gone."""
        return _VERSIONED.sub(lambda m: m.group(1), self.text).strip()


def _open(path: Path) -> IO[str]:
    try:
        with path.open("rb") as f:
            packed = f.read(2) == b"\x1f\x8b"
        raw = gzip.open(path, "rt", encoding="utf-8", errors="surrogateescape") if packed \
            else path.open(encoding="utf-8", errors="surrogateescape")
        return cast(IO[str], raw)
    except OSError as e:
        raise InputError(f"{path}: {e.strerror or e}") from None


def statements(path: Path) -> Iterator[Statement]:
    """The dump's statements in order (its ``DELIMITER`` changes followed; comment lines
    skipped); a dump that ends inside a statement is refused."""
    delim, start = ";", 0
    buf: list[str] = []
    with _open(path) as f:
        for n, line in enumerate(f, 1):
            s = line.rstrip("\n")
            if not buf:
                if not s.strip() or s.startswith("--") or _SANDBOX_MODE.fullmatch(s.strip()):
                    continue
                if s.upper().startswith("DELIMITER "):
                    delim = s.split(None, 1)[1].strip()
                    continue
                start = n
            buf.append(s)
            if s.rstrip().endswith(delim):
                text = "\n".join(buf).rstrip()
                buf = []
                yield Statement(start, text[:-len(delim)])
    if buf:
        raise InputError(f"{path}: line {start}: the dump ends inside a statement (cut "
                         "short?)")


def _name(m: re.Match[str]) -> str:
    return (m.group(1) or "").replace("``", "`") or m.group(2)


# --- what each statement is ---------------------------------------------------------------

@dataclass
class Plan:
    """What loading the dump does, read from it before anything runs."""

    path: Path
    tables: list[str] = field(default_factory=list)
    databases: set[str] = field(default_factory=set)
    skipped: Counter[str] = field(default_factory=Counter)


def kind_of(st: Statement) -> tuple[str, str]:
    """(what it is, its table or why it is skipped): insert, table, object, set, skip,
    run (DROP TABLE and the like, run in order)."""
    plain = st.plain
    for pattern, why in SKIPPED:
        if pattern.match(plain):
            return "skip", why
    if m := _INSERT.match(plain):
        return "insert", _name(m)
    if m := _CREATE_TABLE.match(plain):
        return "table", _name(m)
    if m := _DB.match(plain):
        return "database", _name(m)
    if _OBJECT.match(_DEFINER.sub("", plain)):
        return "object", ""
    word = plain.split(None, 1)[0].upper() if plain else ""
    if word == "SET":
        return "set", ""
    if re.match(r"DROP\s+TABLE\b", plain, re.I):
        return "run", ""
    return "refuse", plain[:80]


def plan(path: Path, database: str) -> Plan:
    """The dump read through once: its tables, its database, what will be skipped; a
    statement the harness does not run, two databases, or a database other than
    ``database``, refused with the line. A directory (``--tab``): its .sql files."""
    p = Plan(path)
    for sql in sources(path):
        _read(p, sql)
    if len(p.databases) > 1:
        raise InputError(f"{path}: holds databases {', '.join(sorted(p.databases))}: one "
                         "dataset entry loads one database (dump them one at a time)")
    if p.databases and database not in p.databases:
        (name,) = p.databases
        raise InputError(f"{path}: a dump of database {name}: load it as database: {name} "
                         "(its views, triggers and routines may name it)")
    return p


def sources(path: Path) -> list[Path]:
    """The files whose statements make the dump: itself, or a ``--tab`` directory's
    .sql files (by name), each of whose data files must have one."""
    if not path.is_dir():
        return [path]
    found = sorted(path.glob("*.sql"))
    if not found:
        raise InputError(f"{path}: a directory without .sql files (mysqldump --tab writes "
                         "TABLE.sql and TABLE.txt for each table)")
    orphans = [f.name for f in sorted(path.iterdir())
               if f.suffix in DATA_FORMATS and not f.with_suffix(".sql").is_file()]
    if orphans:
        raise InputError(f"{path}: data files without their TABLE.sql: {', '.join(orphans)}")
    return found


def _read(p: Plan, path: Path) -> None:
    for st in statements(path):
        kind, what = kind_of(st)
        if kind == "refuse":
            raise InputError(f"{path}: line {st.line}: not loaded into a sandbox: {what!r} "
                             "(a dump holds tables, their rows, views, triggers, routines "
                             "and session settings)")
        if kind == "skip":
            p.skipped[what] += 1
        elif kind == "table" and what not in p.tables:
            p.tables.append(what)
        elif kind == "database":
            p.databases.add(what)


def without_secondary_indexes(ddl: str) -> tuple[str, list[str]]:
    """A CREATE TABLE without its secondary indexes (as SHOW CREATE TABLE writes them,
    one a line), and those indexes; a table with foreign keys keeps them."""
    lines = ddl.split("\n")
    if any(re.search(r"\bFOREIGN\s+KEY\b", ln, re.I) for ln in lines):
        return ddl, []
    keep, indexes = [], []
    for ln in lines:
        if _SECONDARY.match(ln):
            indexes.append(ln.strip().rstrip(","))
        else:
            keep.append(ln)
    if indexes:  # the definition before the closing ")" ends without its comma now
        close = max(i for i, ln in enumerate(keep) if ln.lstrip().startswith(")"))
        keep[close - 1] = keep[close - 1].rstrip().rstrip(",")
    return "\n".join(keep), indexes


# --- the load -------------------------------------------------------------------------------

class _Loader(threading.Thread):
    """One connection loading the INSERTs of the tables given to it, in order."""

    def __init__(self, k: int, ep: Endpoint, database: str, session: list[str]):
        super().__init__(name=f"dump-{k}", daemon=True)
        self.ep, self.database, self.session = ep, database, session
        self.inbox: queue.Queue[Statement | None] = queue.Queue(QUEUE)
        self.rows: Counter[str] = Counter()
        self.error: str | None = None

    def run(self) -> None:
        st: Statement | None = None
        try:
            with connection(self.ep, setup=False, database=self.database) as c, \
                    c.cursor() as cur:
                for s in self.session:
                    cur.execute(s)
                while (st := self.inbox.get()) is not None:
                    if self.error is None:
                        self.rows[kind_of(st)[1]] += cur.execute(st.text)
        except pymysql.err.MySQLError as e:
            self.error = f"line {st.line if st else '?'}: {e.args[-1]}"
            while self.inbox.get() is not None:  # let the reader finish
                pass


def prepare_dataset(ctx: RunContext, data: DumpDataset) -> Prepared:
    """Load the dump into ``data.database`` (made empty first)."""
    p = plan(data.path_of(data.file), data.database)
    t0 = time.monotonic()
    with connection(ctx.endpoint, setup=False) as c, c.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS `{data.database}`")
        cur.execute(f"CREATE DATABASE `{data.database}`")
        cur.execute(f"USE `{data.database}`")
        load = _Load(ctx, data, p, cur)
        load.run()
        tab = _load_tab(ctx, data, p) if p.path.is_dir() else {}
        ctx.progress(f"prepare {data.database}: secondary indexes of "
                     f"{sum(bool(v) for v in load.indexes.values())} tables")
        _add_indexes(ctx.endpoint, data, load.indexes)
        for st in load.deferred:  # views, triggers, routines, events: after every row
            cur.execute(_DEFINER.sub("", st.text))
    secs = time.monotonic() - t0
    rows = sum((ld.rows for ld in load.loaders), Counter()) + \
        Counter({t: r for t, (r, _) in tab.items()})
    n = sum(rows.values())
    own: JsonDict = {"file": data.file,
                     "deferred_indexes": sum(len(v) for v in load.indexes.values()),
                     "objects": sum(kind_of(st)[0] == "object" for st in load.deferred),
                     "skipped": dict(p.skipped)}
    if tab:
        own["load_data_warnings"] = {t: w for t, (_, w) in tab.items() if w}
    return Prepared.timed(data.database, n, secs, kind="dump",
                          tables={t: rows.get(t, 0) for t in p.tables}, own=own)


class _Load:
    """One pass over the dump: tables made and rows sent to the loaders, in order; the
    secondary indexes, and the objects with the settings around them, left for after."""

    def __init__(self, ctx: RunContext, data: DumpDataset, p: Plan, cur: Any):
        self.ctx, self.data, self.plan, self.cur = ctx, data, p, cur
        self.session: list[str] = []  # the settings before the first row, for loaders
        self.loaders: list[_Loader] = []
        self.owner: dict[str, _Loader] = {}
        self.indexes: dict[str, list[str]] = {}
        self.deferred: list[Statement] = []

    def run(self) -> None:
        st: Statement | None = None
        source = self.plan.path
        try:
            for source in sources(self.plan.path):
                for st in statements(source):
                    self._one(st, *kind_of(st))
        except pymysql.err.MySQLError as e:
            raise HarnessError(f"{source}: line {st.line if st else 0}: "
                               f"{e.args[-1]}") from None
        finally:
            for ld in self.loaders:
                ld.inbox.put(None)
            for ld in self.loaders:
                ld.join()
        failed = [ld.error for ld in self.loaders if ld.error]
        if failed:
            raise HarnessError(f"{self.plan.path}: {failed[0]}")

    def _one(self, st: Statement, kind: str, what: str) -> None:
        if kind == "set":
            self.cur.execute(st.text)
            if self.deferred:
                self.deferred.append(st)
            elif not self.loaders:
                self.session.append(st.text)
        elif kind == "object":
            self.deferred.append(st)
        elif kind == "table":
            ddl, self.indexes[what] = without_secondary_indexes(st.text)
            self.cur.execute(ddl)
        elif kind == "run":
            self.cur.execute(st.text)
        elif kind == "insert":
            self._loader_of(what).inbox.put(st)

    def _loader_of(self, table: str) -> _Loader:
        """The loader of a table: a new one while there are fewer than ``threads``."""
        if table not in self.owner:
            if len(self.loaders) < self.data.threads:
                ld = _Loader(len(self.loaders), self.ctx.endpoint, self.data.database,
                             list(self.session))
                ld.start()
                self.loaders.append(ld)
            self.owner[table] = self.loaders[len(self.owner) % len(self.loaders)]
            tables = self.plan.tables
            self.ctx.progress(f"prepare {self.data.database}: table {table} "
                              f"({tables.index(table) + 1 if table in tables else '?'}"
                              f"/{len(tables)})")
        return self.owner[table]


def _load_tab(ctx: RunContext, data: DumpDataset, p: Plan) -> dict[str, tuple[int, int]]:
    """A --tab directory's data files, each into the table its .sql file made, by LOAD
    DATA LOCAL INFILE, ``threads`` tables at a time: {table: (rows, warnings)}."""
    work = []
    for sql in sources(p.path):
        table = next((w for st in statements(sql) if (k := kind_of(st))[0] == "table"
                      for w in [k[1]]), None)
        found = [f for suffix in DATA_FORMATS if (f := sql.with_suffix(suffix)).is_file()]
        if table and found:
            work.append((table, found[0]))
    done: dict[str, tuple[int, int]] = {}

    def load(cur: Any, item: tuple[str, Path]) -> str | None:
        (table, f) = item
        ctx.progress(f"prepare {data.database}: LOAD DATA {f.name}")
        try:
            rows = cur.execute(f"LOAD DATA LOCAL INFILE %s INTO TABLE `{table}` "
                               f"CHARACTER SET utf8mb4 {DATA_FORMATS[f.suffix]}", (str(f),))
            cur.execute("SHOW COUNT(*) WARNINGS")
            done[table] = (rows, int(cur.fetchone()[0]))
            return None
        except pymysql.err.MySQLError as e:
            hint = (" (the server refuses LOCAL INFILE: prepare_mysqld: {local_infile: 1})"
                    if e.args[0] in (1148, 3948) else "")
            return f"{f}: {e.args[-1]}{hint}"

    errors = _on_connections(ctx.endpoint, data, work, load,
                             local_files=[f for _, f in work], read_timeout=3600)
    if errors:
        raise HarnessError("; ".join(errors[:3]))
    return done


def _add_indexes(ep: Endpoint, data: DumpDataset, indexes: dict[str, list[str]]) -> None:
    """Each table's secondary indexes in one ALTER TABLE, ``threads`` tables at a time."""
    def add(cur: Any, item: tuple[str, list[str]]) -> str | None:
        table, ix = item
        try:
            cur.execute(f"ALTER TABLE `{table}` " + ", ".join(f"ADD {x}" for x in ix))
            return None
        except pymysql.err.MySQLError as e:
            return f"{table}: its indexes: {e.args[-1]}"

    errors = _on_connections(ep, data, [(t, ix) for t, ix in indexes.items() if ix], add)
    if errors:
        raise HarnessError(f"{data.file}: " + "; ".join(errors[:3]))


def _on_connections(ep: Endpoint, data: DumpDataset, items: list[Any],
                    job: Callable[[Any, Any], str | None], **connect: Any) -> list[str]:
    """Each item done by ``job(cursor, item)`` on one of ``data.threads`` connections to
    the dataset's database (unique and foreign key checks off), as they come free; the
    errors the jobs gave."""
    work: queue.Queue[Any] = queue.Queue()
    for item in items:
        work.put(item)
    errors: list[str] = []

    def run() -> None:
        with connection(ep, setup=False, database=data.database, **connect) as c, \
                c.cursor() as cur:
            cur.execute("SET SESSION unique_checks = 0, foreign_key_checks = 0")
            while True:
                try:
                    item = work.get_nowait()
                except queue.Empty:
                    return
                if (error := job(cur, item)) is not None:
                    errors.append(error)

    threads = [threading.Thread(target=run, daemon=True) for _ in range(data.threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return errors


def verify_dataset(ep: Endpoint, data: DumpDataset) -> list[str]:
    """Every table of the dump is in the database."""
    try:
        with connection(ep, database=data.database) as c:
            have = {r[0] for r in query(c, "SHOW TABLES")}
    except pymysql.err.MySQLError as e:
        return [f"database {data.database}: {e.args[-1]}"]
    except InputError:
        raise
    return [f"{data.database}: no table {t}" for t in _tables(data) if t not in have]


def _tables(data: DumpDataset) -> list[str]:
    return [what for source in sources(data.path_of(data.file)) for st in statements(source)
            if (k := kind_of(st))[0] == "table" for what in [k[1]]]


EXAMPLE_DUMP = """\
/*M!999999\\- enable the sandbox mode */
-- MariaDB dump 10.19  Distrib 10.11.19-MariaDB, for debian-linux-gnu (x86_64)
/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40101 SET NAMES utf8mb4 */;
/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */;
/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */;
SET @@SESSION.SQL_LOG_BIN= 0;
SET @@GLOBAL.GTID_PURGED=/*!80000 '+'*/ '3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5';
CREATE DATABASE /*!32312 IF NOT EXISTS*/ `prod` /*!40100 DEFAULT CHARACTER SET utf8mb4 */;
USE `prod`;
DROP TABLE IF EXISTS `orders`;
CREATE TABLE `orders` (
  `id` int(11) NOT NULL,
  `customer` int(11) NOT NULL,
  `note` varchar(64) DEFAULT NULL,
  PRIMARY KEY (`id`),
  KEY `by_customer` (`customer`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
LOCK TABLES `orders` WRITE;
/*!40000 ALTER TABLE `orders` DISABLE KEYS */;
INSERT INTO `orders` VALUES (1,7,'first; with a semicolon'),(2,7,NULL),(3,9,'x');
/*!40000 ALTER TABLE `orders` ENABLE KEYS */;
UNLOCK TABLES;
DELIMITER ;;
/*!50003 CREATE*/ /*!50017 DEFINER=`app`@`%`*/ /*!50003 TRIGGER `orders_ai` AFTER INSERT ON \
`orders` FOR EACH ROW SET @last_order = NEW.id */;;
DELIMITER ;
/*!50001 CREATE ALGORITHM=UNDEFINED */
/*!50013 DEFINER=`app`@`%` SQL SECURITY DEFINER */
/*!50001 VIEW `busy` AS select `customer`, count(0) AS `n` from `orders` group by `customer` */;
/*!40014 SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS */;
"""

EXAMPLE_LOG = """\
# Time: 2026-11-25T06:00:00.000000Z
# User@Host: app[app] @ localhost []  Id:     7
# Query_time: 0.000100  Lock_time: 0.000000 Rows_sent: 2  Rows_examined: 3
use prod;
SET timestamp=1795586400;
SELECT customer, n FROM busy;
"""

class DumpPlugin(WorkloadPlugin[WorkloadModel, DumpDataset]):
    """A logical dump (mysqldump's SQL) loaded as a dataset; a replay runs on it."""

    kind = "dump"
    dataset = DumpDataset
    example = {"dataset": {"kind": "dump", "database": "prod", "file": "example-dump.sql"},
               "workload": {"kind": "replay", "database": "prod", "log": "example-slow.log"},
               "files": {"example-dump.sql": EXAMPLE_DUMP, "example-slow.log": EXAMPLE_LOG}}

    def prepare(self, ctx: RunContext, data: DumpDataset) -> Prepared:
        return prepare_dataset(ctx, data)

    def verify(self, ep: Endpoint, data: DumpDataset) -> list[str]:
        return verify_dataset(ep, data)

    def tables(self, data: DumpDataset) -> list[str]:
        return _tables(data)


PLUGIN = DumpPlugin()
