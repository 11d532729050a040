package workbench.jvm;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.util.ArrayBasedMapData;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Events typed with the catalog of Kafka's messages, as workbench/sources/catalog.py types them: only the
 * templates of the event's logger (all of them when it has none) whose first word is the message's are
 * tried, in the catalog's order, each by its literal text first and its regex only then; the first that
 * matches wins. Its fields give topic, partition and attrs.
 */
final class Catalog {
  /** A template as the JVM uses it: its kind, field names and constants already as Spark's strings. */
  private record Template(
      UTF8String kind,
      String word,
      String literal,
      Pattern pattern,
      String[] fields,
      UTF8String[] keys,
      UTF8String[][] consts,
      boolean loose,
      Plan plan) {}

  /**
   * A template matched without a regex (Template.plan in templates.py): its opening text, then per step a
   * field (its position in `fields`, -1 for `{_}`), whether it is an integer, and the text after it.
   */
  private record Plan(String head, int[] field, boolean[] integer, String[] after) {
    static Plan of(JsonNode plan, String[] fields) {
      if (plan == null || plan.isNull()) {
        return null;
      }
      JsonNode steps = plan.get("steps");
      int n = steps.size();
      Plan p = new Plan(plan.get("head").asText(), new int[n], new boolean[n], new String[n]);
      for (int k = 0; k < n; k++) {
        p.field[k] = Arrays.asList(fields).indexOf(steps.get(k).get(0).asText());
        p.integer[k] = steps.get(k).get(1).asText().equals("int");
        p.after[k] = steps.get(k).get(2).asText();
      }
      return p;
    }

    /** The fields' values if `message` matches (as the template's regex would take them), else null. */
    String[] match(String message, int fields) {
      if (!message.startsWith(head)) {
        return null;
      }
      String[] out = new String[fields];
      return step(message, 0, head.length(), out) ? out : null;
    }

    private boolean step(String m, int k, int pos, String[] out) {
      if (k == after.length) {
        return blank(m, pos, m.length());
      }
      String next = after[k];
      if (integer[k]) { // -?\d+ and a text that cannot open with a digit: no other way to match
        int d = pos < m.length() && m.charAt(pos) == '-' ? pos + 1 : pos;
        int start = d;
        while (d < m.length() && m.charAt(d) >= '0' && m.charAt(d) <= '9') {
          d++;
        }
        if (d == start || !m.startsWith(next, d) || !step(m, k + 1, d + next.length(), out)) {
          return false;
        }
        keep(out, k, m, pos, d);
        return true;
      }
      if (next.isEmpty()) { // the last field: all but the white space at the end ({_}: all that is left)
        int end = m.length();
        while (field[k] >= 0 && end > pos && blank(m, end - 1, end)) {
          end--;
        }
        keep(out, k, m, pos, end);
        return true;
      }
      for (int p = m.indexOf(next, pos); p >= 0; p = m.indexOf(next, p + 1)) { // the shortest first
        if (step(m, k + 1, p + next.length(), out)) {
          keep(out, k, m, pos, p);
          return true;
        }
      }
      return false;
    }

    private void keep(String[] out, int k, String m, int from, int to) {
      if (field[k] >= 0) {
        out[field[k]] = m.substring(from, to);
      }
    }

    /** Whether m[from, to) is all RE2's white space (\\s: tab, newline, form feed, return, space). */
    private static boolean blank(String m, int from, int to) {
      for (int i = from; i < to; i++) {
        char c = m.charAt(i);
        if (c != ' ' && c != '\t' && c != '\n' && c != '\f' && c != '\r') {
          return false;
        }
      }
      return true;
    }
  }

  private static final UTF8String EXCEPTION = UTF8String.fromString("exception");

  private final Template[] templates;
  private final Rx[] regexes; // this reader's, made on first use
  private final Map<String, int[]> byLogger = new HashMap<>();
  private final int[] free;
  private final int[] all;
  private final Rx contextTp;
  private final Rx replicaTopic;
  private final Rx oneTopic;
  private final Rx oneTp;
  private final Rx integer;

  Catalog(JsonNode catalog, JsonNode rules) {
    templates = new Template[catalog.size()];
    regexes = new Rx[templates.length];
    List<Integer> anyLogger = new ArrayList<>();
    Map<String, List<Integer>> of = new HashMap<>();
    for (int i = 0; i < templates.length; i++) {
      JsonNode t = catalog.get(i);
      String[] fields = new String[t.get("fields").size()];
      for (int f = 0; f < fields.length; f++) {
        fields[f] = t.get("fields").get(f).asText();
      }
      UTF8String[] keys = new UTF8String[fields.length];
      for (int f = 0; f < fields.length; f++) {
        keys[f] = UTF8String.fromString(fields[f]);
      }
      UTF8String[][] consts = new UTF8String[t.get("consts").size()][];
      for (int k = 0; k < consts.length; k++) {
        JsonNode kv = t.get("consts").get(k);
        consts[k] =
            new UTF8String[] {
              UTF8String.fromString(kv.get(0).asText()), UTF8String.fromString(kv.get(1).asText())
            };
      }
      JsonNode word = t.get("word");
      templates[i] =
          new Template(
              UTF8String.fromString(t.get("kind").asText()),
              word == null || word.isNull() ? null : word.asText(),
              t.get("literal").asText(),
              Pattern.compile(t.get("pattern").asText()),
              fields,
              keys,
              consts,
              t.get("loose").asBoolean(),
              Plan.of(t.get("plan"), fields));
      if (t.get("loggers").isEmpty()) {
        anyLogger.add(i);
      }
      for (JsonNode name : t.get("loggers")) {
        of.computeIfAbsent(name.asText(), k -> new ArrayList<>()).add(i);
      }
    }
    // A logger's templates are its own and those of any logger, in the catalog's order (catalog.py's _index).
    for (Map.Entry<String, List<Integer>> e : of.entrySet()) {
      List<Integer> list = new ArrayList<>(e.getValue());
      list.addAll(anyLogger);
      byLogger.put(e.getKey(), list.stream().distinct().sorted().mapToInt(Integer::intValue).toArray());
    }
    free = anyLogger.stream().mapToInt(Integer::intValue).toArray();
    all = new int[templates.length];
    for (int i = 0; i < all.length; i++) {
      all[i] = i;
    }
    contextTp = Parser.rule(rules, "context_tp");
    replicaTopic = Parser.rule(rules, "replica_topic");
    oneTopic = Parser.rule(rules, "one_topic");
    oneTp = Parser.rule(rules, "one_tp");
    integer = Parser.rule(rules, "int");
  }

  private Catalog(Catalog of) {
    templates = of.templates;
    regexes = new Rx[templates.length];
    byLogger.putAll(of.byLogger);
    free = of.free;
    all = of.all;
    contextTp = of.contextTp.fresh();
    replicaTopic = of.replicaTopic.fresh();
    oneTopic = of.oneTopic.fresh();
    oneTp = of.oneTp.fresh();
    integer = of.integer.fresh();
  }

  /** The same catalog with Matchers of its own, for one reader. */
  Catalog fresh() {
    return new Catalog(this);
  }

  private Rx regex(int i) {
    Rx rx = regexes[i];
    return rx != null ? rx : (regexes[i] = new Rx(templates[i].pattern()));
  }

  /** Sets event, topic, partition and attrs of an event's row (positions 10 to 13 through `at`). */
  void type(
      String logger, String message, String context, String exception, GenericInternalRow row, int[] at) {
    int[] candidates = logger == null ? all : byLogger.getOrDefault(logger, free);
    String word = firstWord(message);
    Template won = null;
    String[] got = null;
    for (int i : candidates) {
      Template t = templates[i];
      if (t.word() != null && !t.word().equals(word)) {
        continue;
      }
      if (!message.contains(t.literal())) {
        continue;
      }
      Plan plan = t.plan();
      got = plan != null ? plan.match(message, t.fields().length) : groups(regex(i).search(message), t);
      if (got != null) {
        won = t;
        break;
      }
    }
    String topicField = null;
    String partitionField = null;
    String listed = null;
    String tps = null;
    List<UTF8String> keys = new ArrayList<>();
    List<UTF8String> values = new ArrayList<>();
    if (won != null) {
      for (int f = 0; f < won.fields().length; f++) {
        String name = won.fields()[f];
        String value = got[f];
        if (name.equals("topic") && !won.loose()) {
          topicField = value;
        } else if (name.equals("partition")) {
          partitionField = value;
        } else {
          if (name.equals("topics") || (name.equals("topic") && won.loose())) {
            listed = value;
          } else if (name.equals("topic_partition")) {
            tps = value;
          }
          attr(keys, values, won.keys()[f], value);
        }
      }
      for (UTF8String[] kv : won.consts()) {
        if (kv[1].numBytes() > 0) {
          keys.add(kv[0]);
          values.add(kv[1]);
        }
      }
    }
    attr(keys, values, EXCEPTION, exception);
    String[] ctx =
        contextTp.groups(context == null ? "" : context, "topic", "topic2", "partition", "partition2");
    boolean inContext = ctx != null;
    Matcher one = listed == null ? null : oneTopic.search(listed);
    boolean isOne = one != null;
    Matcher oneTpm = tps == null ? null : oneTp.search(tps);
    boolean isOneTp = oneTpm != null;
    String topic = topicField;
    if (topic == null && inContext) {
      topic = first(Parser.blankToNull(ctx[0]), Parser.blankToNull(ctx[1]));
    }
    if (topic == null && won != null) {
      Matcher replica = replicaTopic.search(message);
      if (replica != null) {
        topic = Parser.blankToNull(replica.group("topic"));
      }
    }
    if (topic == null && isOne) {
      topic = first(Parser.blankToNull(one.group("topic")), Parser.blankToNull(one.group("bare")));
    }
    if (topic == null && isOneTp) {
      topic = Parser.blankToNull(oneTpm.group("topic"));
    }
    Integer partition = toInt(partitionField);
    if (partition == null && inContext) {
      partition = toInt(ctx[2]);
      if (partition == null) {
        partition = toInt(ctx[3]);
      }
    }
    if (partition == null && isOneTp) {
      partition = toInt(oneTpm.group("partition"));
    }
    put(row, at, 10, won == null ? null : won.kind());
    put(row, at, 11, Parser.str(topic));
    put(row, at, 12, partition);
    put(
        row,
        at,
        13,
        new ArrayBasedMapData(new GenericArrayData(keys.toArray()), new GenericArrayData(values.toArray())));
  }

  /** A regex match's fields, '' for a group that took no part (as Arrow's extract_regex has it). */
  private static String[] groups(Matcher m, Template t) {
    if (m == null) {
      return null;
    }
    String[] out = new String[t.fields().length];
    for (int f = 0; f < out.length; f++) {
      String value = m.group(f + 1);
      out[f] = value == null ? "" : value;
    }
    return out;
  }

  private static void put(GenericInternalRow row, int[] at, int column, Object value) {
    if (at[column] >= 0) {
      row.update(at[column], value);
    }
  }

  private static String first(String a, String b) {
    return a != null ? a : b;
  }

  private static void attr(List<UTF8String> keys, List<UTF8String> values, UTF8String key, String value) {
    if (value != null && !value.isEmpty()) {
      keys.add(key);
      values.add(UTF8String.fromString(value));
    }
  }

  private Integer toInt(String text) {
    if (text == null || integer.search(text) == null) {
      return null;
    }
    return Integer.parseInt(text);
  }

  /** The message's first word as Arrow's utf8_split_whitespace gives it ('' when it opens with a space). */
  private static String firstWord(String message) {
    int i = 0;
    while (i < message.length() && !Character.isWhitespace(message.charAt(i))) {
      i++;
    }
    return message.substring(0, i);
  }
}
