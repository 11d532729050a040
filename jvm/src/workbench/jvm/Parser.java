package workbench.jvm;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A group of lines (a header line and the lines after it up to the next header, or the lines before a
 * file's first header) -> an event and the lines that are no event's, as workbench/sources/log4j.py makes
 * them: the same regexes (given as options), the same rules for message, logger, context and stack trace.
 */
final class Parser {
  private static final Map<String, Parser> COMPILED = new ConcurrentHashMap<>();

  private final Rx head;
  private final Rx brokenHeader;
  private final Rx loggerAtEnd;
  private final Rx exceptionLine;
  private final Rx traceLine;
  private final Rx controlChars;
  private final Rx context;
  private final Rx ownId;
  private final Rx logger;
  private final UTF8String[] reasons;
  private final int rawCut;
  private final Catalog catalog;
  private final int[] at; // column name -> position, for the columns this parser fills
  private final int width;

  private Parser(JsonNode rules, JsonNode catalog, String[] columns) {
    head = rule(rules, "head");
    brokenHeader = rule(rules, "broken_header");
    loggerAtEnd = rule(rules, "logger_at_end");
    exceptionLine = rule(rules, "exception_line");
    traceLine = rule(rules, "trace_line");
    controlChars = rule(rules, "control_chars");
    context = rule(rules, "context");
    ownId = rule(rules, "own_id");
    logger = rule(rules, "logger");
    List<UTF8String> why = new ArrayList<>();
    rules.get("reasons").forEach(r -> why.add(UTF8String.fromString(r.asText())));
    reasons = why.toArray(new UTF8String[0]);
    rawCut = rules.get("raw_cut").asInt();
    this.catalog = new Catalog(catalog, rules);
    List<String> names = Arrays.asList(columns);
    at = new int[COLUMNS.length];
    for (int i = 0; i < COLUMNS.length; i++) {
      at[i] = names.indexOf(COLUMNS[i]);
    }
    width = columns.length;
  }

  /** A parser of its own for one reader (Matchers are not thread-safe), sharing the compiled patterns. */
  private Parser(Parser of) {
    head = of.head.fresh();
    brokenHeader = of.brokenHeader.fresh();
    loggerAtEnd = of.loggerAtEnd.fresh();
    exceptionLine = of.exceptionLine.fresh();
    traceLine = of.traceLine.fresh();
    controlChars = of.controlChars.fresh();
    context = of.context.fresh();
    ownId = of.ownId.fresh();
    logger = of.logger.fresh();
    reasons = of.reasons;
    rawCut = of.rawCut;
    catalog = of.catalog.fresh();
    at = of.at;
    width = of.width;
  }

  static final String[] COLUMNS = {
    "broker_id", "file", "log", "line_no", "lines", "ts_raw", "level", "logger", "context", "message",
    "event", "topic", "partition", "attrs", "stack_trace", "reason", "raw"
  };

  /** One parser per executor JVM for the same rules and catalog: compiling 1,600 regexes takes a while. */
  static Parser of(String rules, String catalog, String[] columns) {
    String key = rules + "\u0000" + catalog + "\u0000" + String.join(",", columns);
    Parser compiled = COMPILED.computeIfAbsent(
        key,
        k -> {
          try {
            return new Parser(LogSource.JSON.readTree(rules), LogSource.JSON.readTree(catalog), columns);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        });
    return new Parser(compiled);
  }

  /** A rule's regex, with the text every match of it holds where it has one (rules' `needs`). */
  static Rx rule(JsonNode rules, String name) {
    JsonNode needs = rules.get("needs").get(name);
    return new Rx(Pattern.compile(rules.get(name).asText()), needs == null ? "" : needs.asText());
  }

  /** A header line's time stamp, level and where its text begins. */
  record Head(String ts, String level, int end) {}

  /** The line's header, or null if it is no header line. */
  Head header(String line) {
    Matcher m = line.isEmpty() ? null : head.search(line);
    return m == null ? null : new Head(m.group("ts"), m.group("level"), m.end());
  }

  /** Parses one group; its rows go to `out`. `header`: whether its first line is a header line. */
  void group(
      LogSource.LogFile file, List<String> lines, long firstNo, Head header, Collection<InternalRow> out) {
    int n = lines.size();
    byte[] part = new byte[n]; // 0 header, 1 message, 2 trace, -1 quarantined
    if (header == null) {
      for (int i = 0; i < n; i++) {
        String l = lines.get(i);
        int why = binary(l) ? 0 : brokenHeader.search(l) != null ? 1 : 3;
        out.add(bad(file, firstNo + i, why, l));
      }
      return;
    }
    if (n > 1) {
      boolean closed = false;
      boolean inTrace = false;
      for (int i = 0; i < n; i++) {
        String l = lines.get(i);
        boolean ends = loggerAtEnd.search(l) != null;
        boolean throwsHere = exceptionLine.search(l) != null;
        if (i > 0) {
          int why = -1;
          boolean traceShaped = throwsHere || traceLine.search(l) != null;
          boolean empty = l.chars().allMatch(c -> c == ' ');
          if (closed && !empty && !traceShaped && !inTrace) {
            why = 2;
          }
          if (brokenHeader.search(l) != null) {
            why = 1;
          }
          if (binary(l)) {
            why = 0;
          }
          if (why >= 0) {
            part[i] = -1;
            out.add(bad(file, firstNo + i, why, l));
          } else {
            part[i] = (byte) (closed ? 2 : 1);
          }
        }
        closed |= ends;
        inTrace |= throwsHere;
      }
    }
    out.add(event(file, header, lines, part, firstNo));
  }

  private boolean binary(String l) {
    if (controlChars.search(l) != null) {
      return true;
    }
    int odd = 0;
    for (int i = 0; i < l.length(); i++) {
      if (l.charAt(i) == '\ufffd') {
        odd++;
      }
    }
    return odd * 4 > l.codePointCount(0, l.length());
  }

  private InternalRow bad(LogSource.LogFile file, long lineNo, int why, String line) {
    GenericInternalRow row = new GenericInternalRow(width);
    set(row, 0, file.brokerId());
    set(row, 1, UTF8String.fromString(file.file()));
    set(row, 2, UTF8String.fromString(file.log()));
    set(row, 3, lineNo);
    set(row, 15, reasons[why]);
    int chars = line.codePointCount(0, line.length());
    int cut = chars > rawCut ? line.offsetByCodePoints(0, rawCut) : line.length();
    set(row, 16, UTF8String.fromString(line.substring(0, cut)));
    return row;
  }

  private InternalRow event(LogSource.LogFile file, Head h, List<String> lines, byte[] part, long lineNo) {
    String first = lines.get(0);
    String ts = h.ts();
    String level = h.level();
    StringBuilder full = new StringBuilder(first.length() + 16).append(first, h.end(), first.length());
    StringBuilder trace = null;
    String exception = null;
    int more = 0;
    for (int i = 1; i < lines.size(); i++) {
      String l = lines.get(i);
      if (part[i] == 1) {
        full.append('\n').append(l);
        more++;
      } else if (part[i] == 2) {
        trace = trace == null ? new StringBuilder(l) : trace.append('\n').append(l);
        more++;
        if (exception == null && exceptionLine.search(l) != null) {
          exception = l;
        }
      }
    }
    String text = full.toString();
    String loggerName = null;
    int cut = text.lastIndexOf(" (");
    if (cut >= 0) {
      String[] m = logger.groups(text.substring(cut + 2), "logger");
      if (m != null) {
        loggerName = m[0];
        text = text.substring(0, cut);
      }
    }
    int end = text.length();
    while (end > 0 && text.charAt(end - 1) == ' ') {
      end--;
    }
    String body = text.substring(0, end);
    String ctx = null;
    String message = body;
    Matcher c = context.search(body);
    if (c != null) {
      ctx = blankToNull(c.group("bracketed"));
      if (ctx == null) {
        ctx = blankToNull(c.group("bare"));
      }
      if (ctx != null) {
        message = body.substring(c.end());
      }
    }
    Integer broker = file.brokerId();
    String[] own = ownId.groups(ctx == null ? "" : ctx, "id");
    if (own != null) {
      broker = Integer.parseInt(own[0]);
    }
    GenericInternalRow row = new GenericInternalRow(width);
    set(row, 0, broker);
    set(row, 1, UTF8String.fromString(file.file()));
    set(row, 2, UTF8String.fromString(file.log()));
    set(row, 3, lineNo);
    set(row, 4, 1 + more);
    set(row, 5, UTF8String.fromString(ts));
    set(row, 6, UTF8String.fromString("WARNING".equals(level) ? "WARN" : level));
    set(row, 7, str(loggerName));
    set(row, 8, str(ctx));
    set(row, 9, UTF8String.fromString(message));
    catalog.type(loggerName, message, ctx, exception, row, at);
    set(row, 14, trace == null ? null : UTF8String.fromString(trace.toString()));
    return row;
  }

  static String blankToNull(String s) {
    return s == null || s.isEmpty() ? null : s;
  }

  static UTF8String str(String s) {
    return s == null ? null : UTF8String.fromString(s);
  }

  private void set(GenericInternalRow row, int column, Object value) {
    if (at[column] >= 0) {
      row.update(at[column], value);
    }
  }
}
