# Set-up and everyday commands.  A fresh machine needs only python3.11 (and, for the streaming
# tests, Java 17 + Maven): everything else is installed into .venv by these targets.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-all lint typecheck bench quality clean kafka-libs crawler-libs browser screenshots
KAFKA_LIBS := deploy/kafka/target/.fetched

$(STAMP): pyproject.toml
	@echo "== installing dustbuster and its dependencies into $(VENV) (first run: about a minute)"
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	@mkdir -p var
	@$(BIN)/python -m pip install -q --upgrade pip > var/pip-install.log 2>&1 || (cat var/pip-install.log; exit 1)
	@$(BIN)/python -m pip install -q -e '.[test,learned]' >> var/pip-install.log 2>&1 || (cat var/pip-install.log; exit 1)
	@touch $(STAMP)
	@echo "== installed: $$($(BIN)/python -m pip list 2>/dev/null | wc -l) packages"

## the jars of the local Kafka broker (Maven Central; needs java 17 + mvn)
$(KAFKA_LIBS): deploy/kafka/pom.xml
	@echo "== fetching the Apache Kafka broker jars (deploy/kafka/pom.xml; first run: about a minute)"
	@mvn -B -q -f deploy/kafka/pom.xml package
	@touch $(KAFKA_LIBS)

kafka-libs: $(KAFKA_LIBS)

## the crawlers' own jars (Heritrix, StormCrawler; Maven Central) for tests/test_consumers.py, which
## also fetches them itself when they are missing (deploy/crawlers/pom.xml)
crawler-libs:
	@mvn -B -q -f deploy/crawlers/pom.xml package

## the main job, end to end: local Kafka broker, a streaming worker, two real access logs fed as
## live lines, the candidate rules of each site (and the batch miner on the same log)
demo: $(STAMP) $(KAFKA_LIBS)
	bash deploy/demo.sh

## a headless browser for the dashboard's tests: Debian's chromium and chromium-driver (apt-get,
## as root); where they cannot be installed, those tests are skipped and say why
BROWSER_PKGS := chromium chromium-driver fonts-dejavu-core
browser:
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "== installing Debian's $(BROWSER_PKGS) for the dashboard's browser tests (first run: a minute or two)"; \
	  { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
	    $(BROWSER_PKGS) >/dev/null; } || echo "== could not install chromium: the browser tests will be skipped"; \
	else echo "== no chromium here and not root: the browser tests will be skipped (apt-get install $(BROWSER_PKGS))"; fi

## the package's real folders (dustbuster/<layer> are links to them), for the linter
PACKAGE_DIRS := core logs fetch state stream agents sim learned dustbuster dustcanon.py

## the linter and the type checker, then the test suite (what .ci/run runs; slow soak tests are excluded)
test: $(STAMP) $(KAFKA_LIBS) browser lint typecheck
	$(BIN)/python -m pytest -q -m "not slow" --durations=25

## ruff over the package (the codes its noqa comments name: pyproject.toml [tool.ruff])
lint: $(STAMP)
	$(BIN)/ruff check $(PACKAGE_DIRS)

## mypy over the whole package, through its links (pyproject.toml [tool.mypy])
typecheck: $(STAMP)
	$(BIN)/mypy -p dustbuster -m dustcanon

test-all: $(STAMP) $(KAFKA_LIBS) browser
	$(BIN)/python -m pytest -q

## the dashboard's screenshots in docs/img (README), taken by its browser tests
screenshots: $(STAMP) $(KAFKA_LIBS) browser
	DUST_SCREENSHOTS=docs/img $(BIN)/python -m pytest -q tests/test_dashboard_browser.py

bench: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[bench]'
	$(BIN)/python bench/bench_mine.py
	$(BIN)/python bench/bench_canon.py

## quality on real web software (issue 10): Trac under gunicorn and a Sphinx site under Apache on
## loopback, three traffic logs each, truth, mine + validate, eval -> docs/quality.md (not in `make test`)
quality: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[bench]'
	bash bench/quality/install.sh
	$(BIN)/python bench/quality/run.py

clean:
	rm -rf $(VENV) var-demo-rules.json .pytest_cache .hypothesis
