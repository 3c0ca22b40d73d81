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

## the main job, end to end: local Kafka broker, a streaming worker, two real access logs fed as
## live lines, the candidate rules of each site (and the batch miner on the same log)
demo: $(STAMP) $(KAFKA_LIBS)
	bash deploy/demo.sh

## the test suite (what .ci/run runs); slow soak tests are excluded
test: $(STAMP) $(KAFKA_LIBS)
	$(BIN)/python -m pytest -q -m "not slow"

test-all: $(STAMP) $(KAFKA_LIBS)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[bench]'
	$(BIN)/python bench/bench_mine.py
	$(BIN)/python bench/bench_canon.py

clean:
	rm -rf $(VENV) var-demo-rules.json .pytest_cache .hypothesis
