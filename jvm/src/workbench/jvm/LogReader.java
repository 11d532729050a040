package workbench.jvm;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.zip.GZIPInputStream;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * One task's splits, line by line: physical lines end at '\r\n', '\r' or '\n' (as Spark's line reader ends
 * them), numbered from the file's first. A split owns the events whose header line opens in its bytes,
 * with all their continuation lines; the lines before the file's first header are its first split's, so no
 * event is ever cut. A later split counts the lines before it to number its own.
 */
final class LogReader implements PartitionReader<InternalRow> {
  private final Iterator<LogSource.Split> splits;
  private final Parser parser;
  private final ArrayDeque<InternalRow> ready = new ArrayDeque<>();
  private Lines lines;
  private LogSource.Split split;
  private InternalRow row;

  LogReader(List<LogSource.Split> splits, Parser parser) {
    this.splits = splits.iterator();
    this.parser = parser;
  }

  @Override
  public boolean next() throws IOException {
    while (ready.isEmpty()) {
      if (lines == null) {
        if (!splits.hasNext()) {
          return false;
        }
        split = splits.next();
        lines = Lines.open(split, parser);
      }
      readGroups();
    }
    row = ready.poll();
    return true;
  }

  /** Reads a few thousand lines of the current split (more where an event is longer), parsing each
   * complete group, so that a task holds no more than that however large its files. */
  private void readGroups() throws IOException {
    List<String> group = new ArrayList<>();
    long firstNo = 0;
    Parser.Head header = null;
    int read = 0;
    while (true) {
      String line;
      try {
        line = lines.next();
      } catch (IOException e) { // a corrupt or cut gzip: the rest of the file is lost (check_files says so)
        group.clear();
        line = null;
      }
      Parser.Head head = line == null ? null : parser.header(line);
      boolean opens = head != null;
      boolean ended = line == null || (opens && lines.lineStart() >= split.end());
      if ((opens || ended) && !group.isEmpty()) {
        parser.group(split.file(), group, firstNo, header, ready);
        group = new ArrayList<>();
      }
      if (ended) {
        lines.close();
        lines = null;
        return;
      }
      if (group.isEmpty()) {
        firstNo = lines.lineNo();
        header = head;
      }
      group.add(line);
      if (header == null) { // a line before the file's first header stands alone: no need to keep it
        parser.group(split.file(), group, firstNo, null, ready);
        group = new ArrayList<>();
      }
      if (++read >= 4096 && !ready.isEmpty() && (group.isEmpty() || opens && group.size() == 1)) {
        if (!group.isEmpty()) {
          lines.pushBack(line);
        }
        return;
      }
    }
  }

  @Override
  public InternalRow get() {
    return row;
  }

  @Override
  public void close() throws IOException {
    if (lines != null) {
      lines.close();
    }
  }

  /** A file's physical lines from a split's start, each with its number and where it opens. */
  static final class Lines {
    private final InputStream in;
    private final byte[] buf = new byte[1 << 16];
    private int pos;
    private int limit;
    private long offset; // of buf[0] in the file
    private long lineNo; // of the last line returned
    private long lineStart;
    private byte[] line = new byte[256];
    private String back;

    private Lines(InputStream in) {
      this.in = in;
    }

    static Lines open(LogSource.Split split, Parser parser) throws IOException {
      InputStream raw = new FileInputStream(split.file().path());
      InputStream in = split.file().gzip() ? new GZIPInputStream(raw, 1 << 16) : raw;
      Lines lines = new Lines(in);
      if (split.start() > 0) {
        lines.skipTo(split.start(), parser);
      }
      return lines;
    }

    /** Counts the lines that open before `start` (bytes, not decoded), then reads past the lines up to
     * the next header: they continue the previous split's last event. */
    private void skipTo(long start, Parser parser) throws IOException {
      boolean atLineStart = true;
      while (offset + pos < start || !atLineStart) {
        if (pos >= limit && !fill()) {
          return;
        }
        byte b = buf[pos++];
        atLineStart = b == '\n' || b == '\r';
        if (atLineStart) {
          lineNo++;
          if (b == '\r' && (pos < limit || fill()) && buf[pos] == '\n') {
            pos++;
          }
        }
      }
      String l;
      while ((l = next()) != null) {
        if (parser.header(l) != null) {
          pushBack(l);
          return;
        }
      }
    }

    long lineNo() {
      return lineNo;
    }

    long lineStart() {
      return lineStart;
    }

    void pushBack(String l) {
      back = l;
    }

    /** The next line (without its terminator), or null at the end. */
    String next() throws IOException {
      if (back != null) {
        String l = back;
        back = null;
        return l;
      }
      if (pos >= limit && !fill()) {
        return null;
      }
      long start = offset + pos;
      int n = 0;
      boolean ascii = true;
      String text = null;
      while (true) {
        int i = pos;
        byte b = 0;
        while (i < limit && (b = buf[i]) != '\n' && b != '\r') {
          ascii &= b >= 0;
          i++;
        }
        boolean ended = i < limit;
        if (ended && n == 0) { // the whole line is in the buffer: no copy
          text = decode(buf, pos, i - pos, ascii);
        } else {
          if (n + i - pos > line.length) {
            line = Arrays.copyOf(line, Math.max(2 * line.length, n + i - pos));
          }
          System.arraycopy(buf, pos, line, n, i - pos);
          n += i - pos;
        }
        pos = ended ? i + 1 : i;
        if (ended) {
          if (b == '\r' && (pos < limit || fill()) && buf[pos] == '\n') {
            pos++;
          }
          break;
        }
        if (!fill()) {
          break;
        }
      }
      lineNo++;
      lineStart = start;
      return text != null ? text : decode(line, 0, n, ascii);
    }

    /** Bytes as text, invalid UTF-8 made valid as Spark's make_valid_utf8 makes it. */
    private static String decode(byte[] bytes, int from, int length, boolean ascii) {
      if (ascii) {
        return new String(bytes, from, length, StandardCharsets.ISO_8859_1);
      }
      return UTF8String.fromBytes(bytes, from, length).makeValid().toString();
    }

    private boolean fill() throws IOException {
      offset += limit;
      pos = 0;
      limit = 0;
      int got = in.read(buf);
      if (got <= 0) {
        return false;
      }
      limit = got;
      return true;
    }

    void close() throws IOException {
      in.close();
    }
  }
}
