# Two commands on a fresh machine: `make demo` and `make test`. Everything else is set up on the way.
VENV      ?= .venv
PYTHON    ?= python3
BIN       := $(VENV)/bin
SAMPLE    ?= sample_data/handmade-2.8
TRIAGE_SAMPLE ?= sample_data/topicid-mismatch-2.8
REPAIR_PLAN ?= repair-plan
REPORT    ?= postmortem
# two notebooks at a time, each one's cells in order in its own kernel (bench/notebooks_ci.py: 0.84x the time)
NBVAL     := --nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg -p no:cacheprovider \
             -n 2 --dist loadfile
export SPARK_LOCAL_IP ?= 127.0.0.1

.PHONY: demo test check lint lab java clean sample-data bench notebooks golden

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[notebooks,test,dev]'
	touch $@

# Our JVM code (jvm/: Kafka's log4j files parsed where Spark reads them, workbench/sources/jvm_logs.py),
# compiled against this venv's Spark into a jar kept beside it; spark.spark_session ships it to the executors.
JAR       := $(VENV)/share/workbench/workbench-jvm.jar
JAVA_SRC  := $(wildcard jvm/src/workbench/jvm/*.java)
$(JAR): $(JAVA_SRC) $(VENV)/.installed | java
	rm -rf $(VENV)/jvm-classes && mkdir -p $(VENV)/jvm-classes $(dir $@)
	javac --release 17 -nowarn -d $(VENV)/jvm-classes \
	  -cp "$$($(BIN)/python -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')/jars/*" $(JAVA_SRC)
	jar cf $@ -C $(VENV)/jvm-classes workbench

# The driver JVM's class-data sharing archive (workbench/jvm_archive.py): Spark starts in about half the time.
# It is kept in the venv, one per PySpark version, and made again with it.
$(VENV)/.jvm-archive: $(VENV)/.installed $(JAR) | java
	$(BIN)/python -m workbench.jvm_archive $(SAMPLE)
	touch $@

# Spark needs Java 17+, and our JVM code its compiler: the JDK, installed here where apt-get can.
JDK_PACKAGE := openjdk-17-jdk-headless
java:
	@command -v javac >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1 || { \
	  echo "installing $(JDK_PACKAGE) (javac is missing)"; SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO="sudo"; \
	  $$SUDO apt-get install -y -qq $(JDK_PACKAGE) >/dev/null || { $$SUDO apt-get update -qq && \
	  $$SUDO apt-get install -y -qq $(JDK_PACKAGE) >/dev/null; }; }
	@command -v javac >/dev/null 2>&1 || { echo "A Java 17+ JDK is needed by Spark and our JVM code, and" \
	  "javac is not on the PATH. On Debian/Ubuntu: sudo apt-get install $(JDK_PACKAGE)" >&2; exit 1; }
	@v=$$(java -XshowSettings:properties -version 2>&1 | sed -n 's/ *java.specification.version = //p'); \
	  [ "$${v%%.*}" -ge 17 ] 2>/dev/null || { echo "Java $$v found; Spark needs 17 or newer." \
	  "On Debian/Ubuntu: sudo apt-get install $(JDK_PACKAGE)" >&2; exit 1; }

demo: $(VENV)/.installed $(JAR) $(VENV)/.jvm-archive java
	$(BIN)/workbench load $(SAMPLE)
	@# exit 1 means "something is critical", which is what this incident is about
	$(BIN)/workbench triage $(TRIAGE_SAMPLE) || [ $$? -eq 1 ]
	$(BIN)/workbench remediate $(TRIAGE_SAMPLE) --out $(REPAIR_PLAN)
	@echo "Postmortem report of $(TRIAGE_SAMPLE):"
	$(BIN)/workbench report $(TRIAGE_SAMPLE) --out $(REPORT)

lint: $(VENV)/.installed
	$(BIN)/ruff check workbench tests bench
	$(BIN)/ruff format --check workbench tests bench
	$(BIN)/mypy workbench

test: lint $(JAR) $(VENV)/.jvm-archive java
	$(BIN)/pytest
	@# the notebooks, as their own step: outputs compared (notebooks/sanitize.cfg), plots checked to exist
	$(BIN)/pytest $(NBVAL) notebooks/

# While working: lint, then the tests not marked slow (CI runs them all, `make test`).
check: lint $(JAR) $(VENV)/.jvm-archive java
	$(BIN)/pytest -m "not slow"

# Write the golden files again (tests/golden/: each sample's triage, each sample's and story's facts), when a
# change to what triage says or asks is meant; review their diff before committing it.
golden: $(VENV)/.installed $(JAR) $(VENV)/.jvm-archive java
	WORKBENCH_WRITE_GOLDEN=1 $(BIN)/pytest -p no:cacheprovider tests/test_golden.py

# Execute every notebook again and keep its outputs (commit them: nbval compares against them).
notebooks: $(VENV)/.installed $(JAR) $(VENV)/.jvm-archive java
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace notebooks/*.ipynb

# Speed, side by side with baselines (bench/README.md), written to bench/RESULTS.md. The 10 GB bundle takes
# about an hour in all; BENCH_DATA=DIR keeps the simulated bundles for the next run.
BENCH_SIZES ?= 0.1,1,10
bench: $(VENV)/.installed $(JAR) $(VENV)/.jvm-archive java
	$(BIN)/python bench/run_all.py --sizes $(BENCH_SIZES)

# The simulated incidents under sample_data/ (workbench/simulate/samples.py); a test checks they are current.
sample-data: $(VENV)/.installed
	$(BIN)/python -m workbench.simulate.samples sample_data

# JupyterLab on notebooks/, its python3 kernel being this venv's (ipykernel installs it in the venv).
lab: $(VENV)/.installed $(JAR) $(VENV)/.jvm-archive java
	$(BIN)/jupyter lab --notebook-dir=notebooks $$([ "$$(id -u)" = 0 ] && echo --allow-root)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache spark-warehouse $(REPAIR_PLAN) $(REPORT)
