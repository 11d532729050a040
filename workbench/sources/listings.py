"""Log-dir listings as SREs paste them -> datadir_files rows; every line a fact, structure or a bad record.

An incident channel holds `ls -l`, `ls -la`, `ls -lR` (GNU and BusyBox; default, long-iso and full-iso
times), `find -ls`, `du -a` and `stat` of a broker's log dir, often several in one paste with the shell's
prompt between them. A bundle keeps each as `brokers/<id>/datadirs/<n>/listing.*` (anything but
listing.tsv); the manifest's "pasted" entry for it may say when it was taken and the host's time zone.

What each format can give (coreutils ls.c and stat.c 9.1, findutils listfile.c 4.9.0, BusyBox ls.c
1.35.0; docs/pasted-evidence.md):
- a size in bytes from `ls -l`, `find -ls`, `stat` and `du -b`; none from `ls -h` (rounded) or plain `du`
  (disk blocks: Kafka's sparse indexes take none). Those sizes are null, never guessed.
- a time: `--full-time` and `stat` an instant; long-iso a minute of local time; the default style a
  minute without its year for a file under about six months old ("Mar 12 10:07"), else only the day
  ("Mar 12  2023"). That year is the one putting the date in the half year before the listing was taken
  (with find's hour for clock skew), and a local time needs the host's zone: without either, mtime is
  null and `mtime_text` keeps what was printed.
The log dir is where a listing starts (its first `dir:` header, find's start point, du's last line), or
the parent of that when it is a partition dir; paths below it are read as listing.tsv's. A path outside
it (stat's, a listing of loose files) keeps its partition dir and file name.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from workbench import schemas
from workbench.bundle import LogDir
from workbench.kafka import logdir as kafka
from workbench.recognise import DU, ENTRY, STAT_FILE
from workbench.sources.common import cut, empty, pasted_lines

STAT_SIZE = r"^\s*Size: (\d+)\s+Blocks: \d+\s+IO Block: \d+\s+(.*?)\s*$"
STAT_MODIFY = r"^Modify: (.+?)\s*$"
STAT_OTHER = r"^\s*(?:Device|Access|Change|Birth|Context): "
PROMPT = r"^(?:.*?[$#%>] +)?((?:busybox +)?(ls|find|du|stat)(?: .*)?)$"
ERROR = r"^(?:busybox +)?(?:ls|find|du|stat): "
HEADER = r"^(.+?)/?:$"
_KINDS = (  # the first that matches
    ("blank", r"^\s*$"),
    ("entry", ENTRY),
    ("du", DU),
    ("stat_file", STAT_FILE),
    ("stat_size", STAT_SIZE),
    ("stat_modify", STAT_MODIFY),
    ("stat_other", STAT_OTHER),
    ("total", r"^total \S+\s*$"),
    ("error", ERROR),
    ("prompt", PROMPT),
    ("header", HEADER),
)
_NOT_KAFKAS = {"l": "a symbolic link", "p": "a fifo", "s": "a socket", "c": "a device", "b": "a device"}
_NO_LINE = "not a line of ls -l, find -ls, du or stat as they print in the C locale"


def read_listings(spark: SparkSession, dirs: list[LogDir]) -> tuple[DataFrame, DataFrame]:
    """(datadir_files rows without topic, partition and dir_state; bad records) of the pasted listings."""
    pasted = [
        (str(p.path), d.broker_id, d.name, p.file, p.taken_at, p.timezone) for d in dirs for p in d.pasted
    ]
    if not pasted:
        return spark.createDataFrame([], ROWS), empty(spark, schemas.BAD_RECORDS)
    origin = spark.createDataFrame(
        pasted, "abs string, broker_id int, log_dir string, listing string, taken string, tz string"
    )
    lines = pasted_lines(spark, [p[0] for p in pasted], origin)
    rows = _files(_marked(lines))
    files = rows.where(F.col("reason").isNull() & ~F.col("structure")).select(*ROWS.fieldNames())
    bad = rows.where(F.col("reason").isNotNull()).select(
        F.lit("listing").alias("source"),
        F.col("listing").alias("file"),
        F.col("line_no").alias("position"),
        "reason",
        cut("line").alias("raw"),
    )
    return files, bad


# What read_listings gives: datadir_files without what datadirs.py takes from dir_name.
ROWS = StructType(
    [f for f in schemas.DATADIR_FILES.fields if f.name not in ("topic", "partition", "dir_state")]
)


def _marked(lines: DataFrame) -> DataFrame:
    """Each line's kind, its command's segment (a prompt opens one) and what the segment says."""
    line = F.col("line")
    kind = F.lit("bad")
    for name, pattern in reversed(_KINDS):
        kind = F.when(line.rlike(pattern), name).otherwise(kind)
    in_file = Window.partitionBy("listing").orderBy("line_no")
    marked = lines.withColumn("kind", kind).withColumn(
        "seg", F.sum((F.col("kind") == "prompt").cast("int")).over(in_file)
    )
    seg = Window.partitionBy("listing", "seg")
    upto = seg.orderBy("line_no")
    whole = upto.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
    is_ = {name: F.col("kind") == name for name, _ in _KINDS}
    header = F.when(is_["header"], F.regexp_extract(line, HEADER, 1))
    stat_file = F.coalesce(
        F.nullif(F.regexp_extract(line, STAT_FILE, 1), F.lit("")), F.regexp_extract(line, STAT_FILE, 2)
    )
    stat_record = F.sum(is_["stat_file"].cast("int")).over(upto)
    record = Window.partitionBy("listing", "seg", "stat_record")
    tool = F.first(F.when(is_["prompt"], F.regexp_extract(line, PROMPT, 2)), ignorenulls=True).over(seg)
    command = F.first(F.when(is_["prompt"], F.regexp_extract(line, PROMPT, 1)), ignorenulls=True).over(seg)
    return (
        marked.withColumn("stat_record", stat_record)
        .select(
            "*",
            tool.alias("tool"),
            command.alias("command"),
            F.last(header, ignorenulls=True).over(upto).alias("section"),
            F.first(header, ignorenulls=True).over(whole).alias("first_header"),
            F.last(F.when(is_["du"], F.regexp_extract(line, DU, 3)), ignorenulls=True)
            .over(whole)
            .alias("du_top"),
            F.first(F.when(is_["entry"], F.struct(_entry(5).alias("name"), _entry(2).alias("type"))), True)
            .over(whole)
            .alias("first_entry"),
            F.max(F.when(is_["stat_size"], F.regexp_extract(line, STAT_SIZE, 1)))
            .over(record)
            .alias("st_size"),
            F.max(F.when(is_["stat_size"], F.regexp_extract(line, STAT_SIZE, 2)))
            .over(record)
            .alias("st_type"),
            F.max(F.when(is_["stat_modify"], F.regexp_extract(line, STAT_MODIFY, 1)))
            .over(record)
            .alias("st_time"),
            F.when(is_["stat_file"], stat_file).alias("st_path"),
        )
        .where(F.col("kind").isin("entry", "du", "stat_file", "bad", "error"))
    )


def _entry(group: int) -> Column:
    return F.regexp_extract("line", ENTRY, group)


def _partition_dir(name: Column) -> Column:
    """A name Kafka parses as a partition dir (live, -delete, -future or -stray)."""
    return name.rlike(kafka.LIVE_DIR) | name.rlike(kafka.SUFFIXED_DIR)


def _name(raw: Column) -> Column:
    """A name as the tool printed it, back to the file's: GNU ls quotes odd names on a terminal and pads
    the others by a space; find -ls escapes (`\\ `). Kafka's own names need neither."""
    trimmed = F.regexp_replace(F.ltrim(raw), r"^'(.*)'$", "$1")
    return F.regexp_replace(trimmed, r"\\(.)", "$1")


def _files(marked: DataFrame) -> DataFrame:
    """One row an entry: its path in the log dir, size and time as exact as the format gives them, and
    `reason` where it is no fact about a Kafka log dir (a link, a device, a line not understood)."""
    kind = F.col("kind")
    entry, du, stat = kind == "entry", kind == "du", kind == "stat_file"
    name = (
        F.when(entry, _name(_entry(5))).when(du, F.regexp_extract("line", DU, 3)).when(stat, F.col("st_path"))
    )
    first = _name(F.col("first_entry.name"))
    start = (
        F.when(F.col("first_header").isNotNull(), F.col("first_header"))
        .when(F.col("du_top").isNotNull(), F.col("du_top"))
        .when((F.col("first_entry.type") == "d") & ((first == ".") | first.contains("/")), first)
    )
    st_type = F.col("st_type")
    stat_type = (
        F.when(st_type.startswith("regular"), "-")
        .when(st_type == "directory", "d")
        .when(st_type == "symbolic link", "l")
        .when(st_type == "fifo", "p")
        .when(st_type == "socket", "s")
        .otherwise("c")
    )
    placed = marked.select(
        "*",
        F.when(entry & F.col("section").isNotNull(), F.concat_ws("/", "section", name))
        .otherwise(name)
        .alias("full"),
        F.when(
            _partition_dir(F.regexp_extract(start, r"([^/]*)$", 1)), F.regexp_replace(start, r"/?[^/]*$", "")
        )
        .otherwise(start)
        .alias("root"),
    )
    full, root = F.col("full"), F.col("root")
    parent = F.regexp_extract(full, r"([^/]+)/[^/]+$", 1)
    tail = F.when(_partition_dir(parent), F.regexp_extract(full, r"([^/]+/[^/]+)$", 1)).otherwise(
        F.regexp_extract(full, r"([^/]*)$", 1)
    )
    rel = (
        F.when(root.isNull() | (root == ""), tail)
        .when(full == root, "")
        .when(full.startswith(F.concat(root, F.lit("/"))), F.expr("substring(full, length(root) + 2)"))
        .otherwise(tail)
    )
    rows = placed.withColumn("rel", rel)
    rel = F.col("rel")
    type_ = (
        F.when(entry, _entry(2))
        .when(stat, stat_type)
        .when(du, F.when(~rel.contains("/") & _partition_dir(rel), "d").otherwise("-"))
    )
    rows = rows.withColumn("type", type_)
    is_dir, tool, command = F.col("type") == "d", F.col("tool"), F.coalesce(F.col("command"), F.lit(""))
    size_text = (
        F.when(entry, _entry(3)).when(du, F.regexp_extract("line", DU, 1)).when(stat, F.col("st_size"))
    )
    in_bytes = ~du | command.rlike(r"(^|\s)(-[a-zA-Z]*b[a-zA-Z]*|--bytes)(\s|$)")
    size = F.when(~is_dir & in_bytes & size_text.rlike(r"^\d+$"), size_text.cast("long"))
    time_text = (
        F.when(entry, _entry(4))
        .when(du, F.nullif(F.regexp_extract("line", DU, 2), F.lit("")))
        .when(stat, F.col("st_time"))
    )
    mtime, precision = _mtime(time_text, F.col("taken_at"), F.col("tz"))
    found_by_find = (tool == "find") | (tool.isNull() & (_entry(1) != "") & F.col("full").contains("/"))
    listed_as = (
        F.when(du, "du").when(stat, "stat").when(entry & found_by_find, "find -ls").when(entry, "ls -l")
    )
    type_name = F.create_map(*(F.lit(x) for kv in _NOT_KAFKAS.items() for x in kv))[F.col("type")]
    structure = (rel == "") | F.regexp_extract(rel, r"([^/]*)$", 1).isin(".", "..")  # the dirs listed
    reason = (
        F.when(kind == "bad", _NO_LINE)
        .when(kind == "error", "an error the command printed")
        .when(structure, None)
        .when(type_name.isNotNull(), F.concat(type_name, F.lit(": not a file or dir Kafka writes")))
        .when(is_dir & rel.contains("/"), "a directory inside a partition dir: Kafka makes none")
    )
    return rows.select(
        "broker_id",
        "log_dir",
        rel.alias("path"),
        F.when(rel.contains("/"), F.substring_index(rel, "/", 1)).when(is_dir, rel).alias("dir_name"),
        F.when(rel.contains("/"), F.regexp_extract(rel, r"^[^/]*/(.*)$", 1)).when(~is_dir, rel).alias("file"),
        size.alias("size"),
        mtime.alias("mtime"),
        precision.alias("mtime_precision"),
        time_text.alias("mtime_text"),
        listed_as.alias("listed_as"),
        "listing",
        "line_no",
        "taken_at",
        reason.alias("reason"),
        structure.alias("structure"),
        "line",
    )


def _mtime(text: Column, taken_at: Column, tz: Column) -> tuple[Column, Column]:
    """(mtime, its precision) from a listing's time: an instant where it prints its offset, else local
    time in the host's zone `tz`, its year (where it is not printed) the one that puts it within the half
    year before `taken_at`, in the host's zone too, allowing find's hour of clock skew (listfile.c)."""
    d = F.regexp_replace(text, " +", " ")
    taken = F.from_utc_timestamp(taken_at, tz)
    year = F.year(taken)

    def local(pattern: str, value: Column = d) -> Column:
        return F.try_to_timestamp(value, F.lit(pattern))

    def recent(pattern: str) -> Column:
        this, last = (
            local("yyyy " + pattern, F.concat_ws(" ", y.cast("string"), d)) for y in (year, year - 1)
        )
        return F.when(this <= taken + F.expr("INTERVAL 1 HOUR"), this).otherwise(last)

    shapes = (  # (shape, local time, precision)
        (r"^\d{4}-\d\d-\d\d \d\d:\d\d$", local("yyyy-MM-dd HH:mm"), "minute"),
        (r"^\d{4}-\d\d-\d\d$", local("yyyy-MM-dd"), "day"),
        (r"^\d\d-\d\d \d\d:\d\d$", recent("MM-dd HH:mm"), "minute"),
        (r"^[A-Z][a-z]{2} \d{1,2} \d{1,2}:\d\d$", recent("MMM d H:mm"), "minute"),
        (r"^[A-Z][a-z]{2} \d{1,2} \d{4}$", local("MMM d yyyy"), "day"),
        (
            r"^[A-Z][a-z]{2} [A-Z][a-z]{2} \d{1,2} \d\d:\d\d:\d\d \d{4}$",
            local("MMM d HH:mm:ss yyyy", F.substring(d, 5, 100)),
            "second",
        ),
    )
    offset = d.rlike(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? [+-]\d{4}$")
    mtime = F.when(offset, local("yyyy-MM-dd HH:mm:ss[.SSSSSSSSS] Z"))
    precision = F.when(offset, F.when(d.contains("."), "subsecond").otherwise("second"))
    for shape, wall, exact in shapes:
        mtime = mtime.when(d.rlike(shape), F.to_utc_timestamp(wall, tz))
        precision = precision.when(d.rlike(shape), exact)
    return mtime, F.when(mtime.isNotNull(), precision)
