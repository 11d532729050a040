package workbench.jvm;

import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A compiled regex and one Matcher reused for every search (read a search's groups before the next), with
 * the text every match holds, looked for first. One per reader: Matchers are not thread-safe.
 */
final class Rx {
  private static final String[] NONE = new String[0];

  private final Pattern pattern;
  private final String needs;
  private final boolean anchored;
  private final Map<String, String[]> memo = new HashMap<>();
  private Matcher matcher;

  Rx(Pattern pattern) {
    this(pattern, "");
  }

  Rx(Pattern pattern, String needs) {
    this.pattern = pattern;
    this.needs = needs;
    anchored = pattern.pattern().replaceFirst("^(\\(\\?[a-z]+\\))*", "").startsWith("^");
  }

  Rx fresh() {
    return new Rx(pattern, needs);
  }

  /** The named groups of the match in `s` (null where the group took no part), or null for no match;
   * remembered, for strings that repeat (contexts, loggers): a few thousand distinct ones a task. */
  String[] groups(String s, String... names) {
    String[] known = memo.get(s);
    if (known != null) {
      return known == NONE ? null : known;
    }
    Matcher m = search(s);
    String[] got = NONE;
    if (m != null) {
      got = new String[names.length];
      for (int i = 0; i < names.length; i++) {
        got[i] = m.group(names[i]);
      }
    }
    if (memo.size() >= 8192) {
      memo.clear();
    }
    memo.put(s, got);
    return got == NONE ? null : got;
  }

  /** The match in `s`, or null. A pattern that opens with '^' is tried at the start only. */
  Matcher search(String s) {
    if (!needs.isEmpty() && !s.contains(needs)) {
      return null;
    }
    Matcher m = matcher == null ? (matcher = pattern.matcher(s)) : matcher.reset(s);
    return (anchored ? m.lookingAt() : m.find()) ? m : null;
  }
}
