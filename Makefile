# Set-up and everyday commands.  A fresh machine needs only python3.11 (and, for the streaming
# tests, Java 17 + Maven): everything else is installed into .venv by these targets.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-all bench clean kafka-libs
KAFKA_LIBS := deploy/kafka/target/.fetched

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

## the jars of the local Kafka broker (Maven Central; needs java 17 + mvn)
$(KAFKA_LIBS): deploy/kafka/pom.xml
	mvn -B -q -f deploy/kafka/pom.xml package
	touch $(KAFKA_LIBS)

kafka-libs: $(KAFKA_LIBS)

## the main job on the bundled sample: mine the semicomplete.com access log, then canonize it
demo: $(STAMP)
	$(BIN)/dustbuster mine tests/data/logs/semicomplete-apache/apache_logs --site semicomplete.com --json > var-demo-rules.json
	$(BIN)/dustbuster mine tests/data/logs/semicomplete-apache/apache_logs --site semicomplete.com --limit 25
	awk '{print "http://semicomplete.com" $$7}' tests/data/logs/semicomplete-apache/apache_logs | $(BIN)/dustbuster canonize --rules var-demo-rules.json > /dev/null

## the test suite (what .ci/run runs); slow soak tests are excluded
test: $(STAMP) $(KAFKA_LIBS)
	$(BIN)/python -m pytest -q -m "not slow"

test-all: $(STAMP) $(KAFKA_LIBS)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python bench/bench_mine.py

clean:
	rm -rf $(VENV) var-demo-rules.json .pytest_cache .hypothesis
