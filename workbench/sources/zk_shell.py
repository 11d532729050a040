"""ZooKeeper shell transcripts as SREs paste them -> znodes_observed: each znode a command showed, with the
stat fields it printed and nothing for those it did not.

Read (docs/pasted-evidence.md cites each format's source at the releases named):
- zkCli.sh and Kafka's zookeeper-shell.sh (both ZooKeeperMain, ZooKeeper 3.4-3.9): a command behind the
  JLine prompt `[zk: host(CONNECTED) 3] get -s /controller`, typed without one (Kafka ships no JLine: only
  the terminal's echo shows it) or given on the shell's command line (`zookeeper-shell.sh zk:2181 get /x`);
  `get` (the data; the stat with -s, and always in 3.4), `ls` (`[a, b]`; -s adds the stat, glued to the
  list in 3.5.3-3.5.10), `ls -R` (a path per line), `ls2` and `stat`; `Node does not exist: /x` (and the
  NoNodeException text `get` printed in 3.5.0-3.6.2 and 3.7.0) as the znode's absence;
- zk_shell's `tree` (names under `├── `, `│   ` per level), `get` and `ls` behind its prompt
  `(CONNECTED [zk1:2181]) /> ` (its `cp ... json://` export is zk_export.py's).
The banner, WATCHER notices, the tools' log lines and stack traces are structure. A write typed in the
transcript (`delete /controller`) and the output of commands not read are bad records that say so.
A transcript holds a few znodes, each at the moment its command ran: not ZooKeeper's tree.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from workbench import schemas
from workbench.recognise import ABSENT, BARE, CHILDREN, ONE_SHOT, READS, TREE_NODE, WRITES, ZS_PROMPT
from workbench.recognise import ZK_PROMPT as PROMPT
from workbench.recognise import ZK_STAT as STAT

GLUED = r"^\[(.*)\]cZxid = (0x[0-9a-fA-F]+)\s*$"  # ls -s in 3.5.3-3.5.10
REFUSED = r"^Command not found: "
TREE_TOP = r"^\.\s*$"
STRUCTURE = "|".join(
    (
        r"^Connecting to \S+\s*$",
        r"^Welcome to (?:ZooKeeper!|zk-shell .*)\s*$",
        r"^JLine support is (?:en|dis)abled\s*$",
        r"^WATCHER::\s*$",
        r"^WatchedEvent state:\w+ type:\w+ path:\S+(?: zxid: -?\d+)?\s*$",
        r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} \[myid:[^\]]*\] - [A-Z]+ ",  # zkCli's log4j/logback
        r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] [A-Z]+ ",  # Kafka's tools-log4j on stderr
        r"^SLF4J: ",
        r"^'[^']+' has been deprecated\. ",
        r"^Quitting\.\.\.\s*$",
        r"^ZooKeeper -server host:port.*$|^\t[a-zA-Z]+(?: .*)?$",  # the usage, after an unknown command
        r"^Copying took [\d.]+ secs\s*$",
        r"^\s+at \S+\(.*\)\s*$|^\s*\.\.\. \d+ more\s*$|^Caused by: ",
        r"^(?:[a-z]\w*\.)+[A-Z]\w*(?:Exception|Error)(?::.*)?$|^[A-Z]\w*(?:Exception|Error): ",
    )
)
MAX_TREE_DEPTH = 24


def kind(line: Column) -> Column:
    """A transcript line's kind, null for none of these (a get's data, or a line of something else)."""
    zk_text = F.coalesce(*(F.nullif(F.regexp_extract(line, p, 1), F.lit("")) for p in (PROMPT, ONE_SHOT)))
    return (
        F.when(zk_text.isNotNull() | line.rlike(BARE), "zk_command")
        .when(F.regexp_extract(line, ZS_PROMPT, 2) != "", "zs_command")
        .when(line.rlike(PROMPT) | line.rlike(ZS_PROMPT) | line.rlike(STRUCTURE), "structure")
        .when(line.rlike(ONE_SHOT), "shell")
        .when(line.rlike(REFUSED), "refused")
        .when(line.rlike(STAT), "stat")
        .when(line.rlike(GLUED), "glued")
        .when(line.rlike(ABSENT), "absent")
        .when(line.rlike(CHILDREN), "children")
        .when(line.rlike(TREE_TOP), "tree_top")
        .when(line.rlike(TREE_NODE), "tree_node")
    )


def command(line: Column) -> Column:
    """The command a zk_command or zs_command line holds: struct(tool, text, cwd)."""
    text = F.coalesce(
        *(F.nullif(F.regexp_extract(line, p, 1), F.lit("")) for p in (PROMPT, ONE_SHOT, BARE)),
        F.regexp_extract(line, ZS_PROMPT, 2),
    )
    zs = line.rlike(ZS_PROMPT)
    return F.struct(
        F.when(zs, "zs").otherwise("zk").alias("tool"),
        text.alias("text"),
        F.when(zs, F.regexp_extract(line, ZS_PROMPT, 1)).alias("cwd"),
    )


def observations(lines: DataFrame) -> tuple[DataFrame, DataFrame]:
    """(znodes_observed, bad records) of transcript lines: file, taken_at, tz, line_no, line, kind (above,
    or null), seg (the segment's starting line: struct(tool, text, cwd, line_no), null before any)."""
    text = F.col("seg.text")
    name = F.regexp_extract(text, r"^(\S+)", 1)
    arg = F.regexp_extract(text, r"^\S+(?:\s+-[a-zA-Z]+)*\s+(\S+)", 1)
    path = F.when(F.col("seg.tool") == "zk", F.regexp_extract(text, r"(?:^|\s)(/\S*)", 1)).otherwise(
        _resolved(F.col("seg.cwd"), arg)
    )
    recursive = text.rlike(r"\s-[a-zA-Z]*R")
    zk = F.col("seg.tool") == "zk"
    read = (zk & name.isin(*READS.split("|"))) | (~zk & name.isin("get", "ls", "tree"))
    role = _role(F.col("kind"), name, zk, recursive, read)
    after = F.lead("line").over(Window.partitionBy("file").orderBy("line_no"))
    marked = (
        lines.withColumn("next_line", after)
        .where(F.col("seg").isNotNull())
        .select("*", name.alias("cmd"), path.alias("path"), role.alias("role"), read.alias("read"))
    )
    one_znode = (zk & ~recursive) | (name == "get")  # the commands that show one znode
    commands = _per_command(marked.where(F.col("read") & F.col("role").isNotNull() & one_znode))
    rows = commands.where(F.col("exists").isNotNull()).drop("problem")
    rows = rows.unionByName(_listed(marked)).unionByName(_tree(marked))
    problems = commands.where(F.col("problem").isNotNull()).select(
        "file", "line_no", F.col("problem").alias("reason"), F.col("command").alias("line")
    )
    return rows.select(*schemas.ZNODES_OBSERVED.names), _bad(marked).unionByName(problems)


def _resolved(cwd: Column, arg: Column) -> Column:
    """zk_shell resolves a path against the prompt's cwd."""
    joined = F.concat(F.regexp_replace(cwd, "/$", ""), F.lit("/"), arg)
    return F.when(arg == "", cwd).when(arg.startswith("/"), arg).otherwise(joined)


def _role(kind: Column, name: Column, zk: Column, recursive: Column, read: Column) -> Column:
    """What a line is to the command whose segment it is in: a part of its output or null (a bad line)."""
    is_get = name == "get"
    shallow = F.length(F.regexp_extract("line", TREE_NODE, 1)) < 4 * MAX_TREE_DEPTH
    watcher = F.coalesce(F.col("next_line").rlike(r"^(?:WATCHER::|WatchedEvent )"), F.lit(False))
    return (
        F.when((F.trim(F.col("line")) == "") & ~watcher, "blank")  # a get's empty data, or a stray one
        .when(kind.isin("zk_command", "zs_command", "structure", "shell"), "structure")
        .when(read & (kind == "refused"), "refused")
        .when(kind == "refused", "structure")
        .when(~read, None)
        .when(kind == "absent", "absent")
        .when(zk & (kind == "stat") & name.isin("get", "ls", "ls2", "stat"), "stat")
        .when(zk & (kind == "glued") & name.isin("ls", "ls2"), "glued")
        .when(is_get, "payload")  # whatever else it looks like
        .when(zk & (kind == "children") & name.isin("ls", "ls2") & ~recursive, "children")
        .when(zk & recursive & kind.isNull() & F.col("line").rlike(r"^/\S*\s*$"), "path")
        .when(~zk & (name == "ls") & kind.isNull(), "child")
        .when(~zk & (name == "tree") & kind.isin("tree_top", "tree_node") & shallow, kind)
    )


def _stat(field: str) -> Column:
    value = F.regexp_extract("line", STAT, 2)
    return F.max(F.when(F.regexp_extract("line", STAT, 1) == field, value))


def _per_command(marked: DataFrame) -> DataFrame:
    """A row per get, ls, ls2 or stat: its znode as the command showed it."""
    payload = F.sort_array(F.collect_list(F.when(F.col("role") == "payload", F.struct("line_no", "line"))))
    glued = F.regexp_extract("line", GLUED, 2)
    listed = F.when(F.col("role") == "glued", F.regexp_extract("line", GLUED, 1)).when(
        F.col("role") == "children", F.regexp_extract("line", CHILDREN, 1)
    )
    per = marked.groupBy("file", "taken_at", "tz", "seg", "cmd", "path").agg(
        F.max((F.col("role") == "absent").cast("int")).alias("absent"),
        F.max((F.col("role") == "refused").cast("int")).alias("refused"),
        F.sum((F.col("role") == "blank").cast("int")).alias("blank"),
        F.transform(payload, lambda x: x["line"]).alias("payload"),
        F.first(listed, ignorenulls=True).alias("listed"),
        F.max(F.when(F.col("role") == "glued", glued)).alias("glued_czxid"),
        *(
            _stat(f).alias(f)
            for f in ("cZxid", "ctime", "mZxid", "mtime", "pZxid", "cversion", "dataVersion", "aclVersion")
        ),
        *(_stat(f).alias(f) for f in ("ephemeralOwner", "dataLength", "numChildren")),
    )
    shown = F.array_join("payload", "\n")
    length = F.col("dataLength").cast("int")
    is_get = F.col("cmd") == "get"
    null_word = F.when(F.col("seg.tool") == "zs", "None").otherwise("null")
    null_data = (F.size("payload") == 1) & (shown == null_word) & F.coalesce(length != 4, F.lit(True))
    base64 = F.col("seg.text").rlike(r"\s-[a-zA-Z]*b")  # get -b (3.9.3+): the data in base64
    hexdump = is_get & F.col("seg.text").rlike(r"\s-[a-zA-Z]*x")  # get -x (3.9.3+): a hex dump, not read
    only_blank = is_get & (F.col("blank") == 1)  # empty data prints an empty line
    printed = is_get & (F.col("absent") == 0) & ((F.size("payload") > 0) | (length == 0) | only_blank)
    cut_short = printed & ~null_data & ~base64 & (F.octet_length(shown) != length)
    data_shown = printed & ~F.coalesce(cut_short, F.lit(False)) & ~hexdump
    data = F.when(data_shown & ~null_data, F.when(F.size("payload") > 0, shown).otherwise(""))
    silent = (
        (F.col("absent") == 0)
        & (F.size("payload") == 0)
        & F.col("listed").isNull()
        & F.coalesce("cZxid", "glued_czxid").isNull()
        & ~only_blank
    )
    problem = (
        F.when(silent & (F.col("refused") == 1), "the shell did not run it: Command not found")
        .when(hexdump & printed, "the data as get -x prints it (a hex dump, 3.9.3+) is not read")
        .when(
            silent,
            F.concat(F.lit("`"), F.col("cmd"), F.lit("` shows no output here: the paste is cut short?")),
        )
        .when(
            cut_short,
            F.format_string(
                "the data shown is %d bytes, its dataLength %d: wrapped or cut by the terminal",
                F.octet_length(shown),
                length,
            ),
        )
    )
    names = F.filter(F.split(F.col("listed"), ", "), lambda n: n != "")
    observed_as = (
        F.when(F.col("seg.tool") == "zs", F.col("cmd"))
        .when(
            F.col("cmd") == "ls", F.when(F.col("seg.text").rlike(r"\s-[a-zA-Z]*s"), "ls -s").otherwise("ls")
        )
        .otherwise(F.col("cmd"))
    )
    return per.select(
        "path",
        F.when(~silent, F.col("absent") == 0).alias("exists"),
        observed_as.alias("observed_as"),
        F.col("seg.text").alias("command"),
        data.alias("data"),
        F.when(data.isNotNull(), F.when(base64, "base64").otherwise("utf-8")).alias("data_encoding"),
        data_shown.alias("data_shown"),
        length.alias("data_length"),
        _hex(F.coalesce("cZxid", "glued_czxid")).alias("czxid"),
        _hex(F.col("mZxid")).alias("mzxid"),
        _hex(F.col("pZxid")).alias("pzxid"),
        _java_date(F.col("ctime"), F.col("tz")).alias("ctime"),
        _java_date(F.col("mtime"), F.col("tz")).alias("mtime"),
        F.col("dataVersion").cast("int").alias("version"),
        F.col("cversion").cast("int").alias("cversion"),
        F.col("aclVersion").cast("int").alias("aversion"),
        _hex(F.col("ephemeralOwner")).alias("ephemeral_owner"),
        F.col("numChildren").cast("int").alias("num_children"),
        F.when(F.col("listed").isNotNull(), names).alias("children"),
        "file",
        F.col("seg.line_no").alias("line_no"),
        "taken_at",
        problem.alias("problem"),
    )


def _listed(marked: DataFrame) -> DataFrame:
    """`ls -R` (zkCli: a path per line) and zk_shell's `ls` (a name per line) as rows."""
    paths = marked.where(F.col("role") == "path").select(
        F.trim("line").alias("path"),
        F.lit("ls -R").alias("observed_as"),
        "file",
        "line_no",
        "taken_at",
        "seg",
    )
    zs = (
        marked.where(F.col("role") == "child")
        .groupBy("file", "taken_at", "seg", "path")
        .agg(F.sort_array(F.collect_list(F.trim("line"))).alias("children"))
    )
    return _bare(paths).unionByName(
        _bare(
            zs.select("*", F.lit("ls").alias("observed_as"), F.col("seg.line_no").alias("line_no")),
            "children",
        )
    )


def _tree(marked: DataFrame) -> DataFrame:
    """zk_shell's `tree`: '.' is the path it was given, each `├── name` a znode whose ancestors are the
    last names printed at each shallower level (a pre-order walk)."""
    nodes = marked.where(F.col("role").isin("tree_top", "tree_node"))
    level = (F.length(F.regexp_extract("line", TREE_NODE, 1)) / 4).cast("int")
    own = F.regexp_extract("line", TREE_NODE, 2)
    before = Window.partitionBy("file", "seg").orderBy("line_no")
    at = nodes.select("*", level.alias("level"), own.alias("own"))
    ancestors = F.array(
        *(
            F.last(F.when(F.col("level") == k, F.col("own")), ignorenulls=True).over(before)
            for k in range(MAX_TREE_DEPTH)
        )
    )
    walked = at.select("*", ancestors.alias("up"))
    below = F.array_join(F.concat(F.slice("up", 1, F.col("level")), F.array("own")), "/")
    root = F.regexp_replace("path", "/$", "")
    shown = walked.select(
        F.when(F.col("role") == "tree_top", F.col("path"))
        .otherwise(F.concat(root, F.lit("/"), below))
        .alias("path"),
        F.lit("tree").alias("observed_as"),
        *[c for c in marked.columns if c != "path"],
    )
    return _bare(shown)


def _bare(rows: DataFrame, *known: str) -> DataFrame:
    """Rows of a segment's command that show only that a znode exists (and the `known` columns)."""
    return observed_rows(rows.withColumn("command", F.col("seg.text")), False, *known)


def observed_rows(rows: DataFrame, data_shown: bool, *known: str) -> DataFrame:
    """znodes_observed rows from path, observed_as, command, file, line_no, taken_at and the `known`
    columns: the rest is null, not shown."""
    given = {"path", "observed_as", "command", "file", "line_no", "taken_at", *known}
    return rows.select(
        *given,
        F.lit(True).alias("exists"),
        F.lit(data_shown).alias("data_shown"),
        *(
            F.lit(None).cast(f.dataType).alias(f.name)
            for f in schemas.ZNODES_OBSERVED.fields
            if f.name not in given | {"exists", "data_shown"}
        ),
    ).select(*schemas.ZNODES_OBSERVED.names)


def _bad(marked: DataFrame) -> DataFrame:
    """Lines of a command's segment that are none of its output: file, line_no, reason, line."""
    tool = F.when(F.col("seg.tool") == "zs", " (zk_shell)").otherwise(" (ZooKeeper 3.4-3.9)")
    starts = F.col("line_no") == F.col("seg.line_no")
    reason = (
        F.when(
            starts & F.col("cmd").isin(*WRITES.split("|")),
            "a write to ZooKeeper typed in the transcript: not state (later commands show its effect)",
        )
        .when(F.col("role").isNotNull(), None)
        .when(~F.col("read"), F.concat(F.lit("output of `"), F.col("cmd"), F.lit("`, a command not read")))
        .when(
            F.col("kind").isin("tree_top", "tree_node"),
            F.lit(f"a tree line deeper than {MAX_TREE_DEPTH} levels"),
        )
        .otherwise(F.concat(F.lit("not a line of `"), F.col("cmd"), F.lit("`'s output"), tool))
    )
    return marked.select("file", "line_no", reason.alias("reason"), "line").where(F.col("reason").isNotNull())


def _hex(text: Column) -> Column:
    """`0x` + Long.toHexString: two's complement for a negative long (0xffffffffffffffff is -1)."""
    digits = F.regexp_extract(text, r"^0x([0-9a-fA-F]{1,16})$", 1)
    unsigned = F.conv(F.nullif(digits, F.lit("")), 16, 10).cast("decimal(20,0)")
    negative = (F.length(digits) == 16) & F.lower(F.substring(digits, 1, 1)).isin(*"89abcdef")
    return (
        F.when(negative, unsigned - F.lit(str(2**64)).cast("decimal(20,0)")).otherwise(unsigned).cast("long")
    )


def _java_date(text: Column, tz: Column) -> Column:
    """java.util.Date.toString() (`Tue Mar 12 10:07:00 UTC 2024`) in the shell's JVM zone: read where the
    zone printed is UTC/GMT or an offset, or the host's zone is known; else null (CST, IST are ambiguous)."""
    shape = r"^\w{3} (\w{3}) (\d{1,2}) (\d\d:\d\d:\d\d) (\S+) (\d{4})$"

    def part(i: int) -> Column:
        return F.regexp_extract(text, shape, i)

    wall = F.try_to_timestamp(
        F.concat_ws(" ", part(5), part(1), part(2), part(3)), F.lit("yyyy MMM d HH:mm:ss")
    )
    zone = part(4)
    return (
        F.when(zone.isin("UTC", "GMT", "Z"), wall)
        .when(zone.rlike(r"^GMT[+-]\d\d:\d\d$"), F.to_utc_timestamp(wall, F.substring(zone, 4, 6)))
        .when(tz.isNotNull() & (zone != ""), F.to_utc_timestamp(wall, tz))
    )
