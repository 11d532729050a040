package workbench.jvm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Kafka's log4j logs read and parsed in Spark's JVM: {@code spark.read.format("workbench.jvm.LogSource")}.
 *
 * <p>Options (JSON but the sizes; workbench/sources/jvm_logs.py writes them): {@code files} (what to read,
 * with the file's name in the bundle, its broker and log), {@code rules} (the layout's regexes, the same as
 * log4j.py's), {@code catalog} (the templates of kafka/messages), {@code schema} (the rows' DDL),
 * {@code maxSplitBytes} and {@code openCostInBytes} (how files are cut and packed into tasks, as Spark's
 * file sources do). Rows are log4j.py's PARSED: events, and the lines that are no event's with a reason.
 */
public final class LogSource implements TableProvider {
  static final ObjectMapper JSON = new ObjectMapper();

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    return StructType.fromDDL(options.get("schema"));
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    return new LogTable(schema, properties);
  }

  static JsonNode json(Map<String, String> options, String key) {
    String text = options.get(key);
    if (text == null) {
      throw new IllegalArgumentException("workbench.jvm.LogSource needs the option " + key);
    }
    try {
      return JSON.readTree(text);
    } catch (IOException e) {
      throw new UncheckedIOException("workbench.jvm.LogSource: option " + key + " is not JSON", e);
    }
  }

  /** One file to read: where, its name in the bundle, its broker (null: not known) and its log. */
  record LogFile(String path, String file, Integer brokerId, String log, long size, boolean gzip)
      implements Serializable {}

  /** Bytes [start, end) of a file: its events whose header line opens there. */
  record Split(LogFile file, long start, long end) implements Serializable {}

  /** What one task reads: splits packed up to maxSplitBytes. */
  record Part(List<Split> splits) implements InputPartition {}

  static final class LogTable implements Table, SupportsRead, ScanBuilder, Scan, Batch {
    private final StructType schema;
    private final Map<String, String> options;

    LogTable(StructType schema, Map<String, String> options) {
      this.schema = schema;
      this.options = options;
    }

    @Override
    public String name() {
      return "kafka log4j logs";
    }

    @Override
    @SuppressWarnings("deprecation") // Table.columns() is made of it
    public StructType schema() {
      return schema;
    }

    @Override
    public Set<TableCapability> capabilities() {
      return EnumSet.of(TableCapability.BATCH_READ);
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap ignored) {
      return this;
    }

    @Override
    public Scan build() {
      return this;
    }

    @Override
    public StructType readSchema() {
      return schema;
    }

    @Override
    public Batch toBatch() {
      return this;
    }

    /** Plain files larger than maxSplitBytes are cut (a gzip is read whole); splits are packed into
     * tasks of at most maxSplitBytes, each file counting openCostInBytes more, in the order given. */
    @Override
    public InputPartition[] planInputPartitions() {
      long most = Long.parseLong(options.get("maxSplitBytes"));
      long open = Long.parseLong(options.get("openCostInBytes"));
      List<InputPartition> parts = new ArrayList<>();
      List<Split> current = new ArrayList<>();
      long filled = 0;
      for (JsonNode f : json(options, "files")) {
        JsonNode broker = f.get("broker_id");
        LogFile file =
            new LogFile(
                f.get("path").asText(),
                f.get("file").asText(),
                broker == null || broker.isNull() ? null : broker.asInt(),
                f.get("log").asText(),
                f.get("size").asLong(),
                f.get("path").asText().endsWith(".gz"));
        long step = file.gzip() || file.size() <= most ? Math.max(1, file.size()) : most;
        for (long at = 0; at == 0 || at < file.size(); at += step) {
          long end = file.gzip() ? Long.MAX_VALUE : Math.min(file.size(), at + step);
          long cost = Math.min(file.size(), at + step) - at + open;
          if (!current.isEmpty() && filled + cost > most) {
            parts.add(new Part(current));
            current = new ArrayList<>();
            filled = 0;
          }
          current.add(new Split(file, at, end));
          filled += cost;
        }
      }
      if (!current.isEmpty()) {
        parts.add(new Part(current));
      }
      return parts.toArray(new InputPartition[0]);
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
      return new Factory(
          json(options, "rules").toString(), json(options, "catalog").toString(), schema.fieldNames());
    }
  }

  /** Sent to the executors: the rules and catalog as text, compiled once per executor JVM. */
  record Factory(String rules, String catalog, String[] columns) implements PartitionReaderFactory {
    @Override
    public PartitionReader<InternalRow> createReader(InputPartition part) {
      return new LogReader(((Part) part).splits(), Parser.of(rules, catalog, columns));
    }
  }
}
