"""Test and benchmark support, outside the product: not installed (pyproject.toml does not list
it), imported only by tests/ and bench/ from the repository root (tests: pytest's ``pythonpath``;
bench scripts: the root they put on ``sys.path``).  The package never imports it
(tests/test_layout.py checks both).

* :mod:`dustdev.devkafka`: a throwaway Kafka broker and worker processes (docker/testcontainers
  when asked for);
* :mod:`dustdev.devsim`: the site simulator as a process, and its sites file;
* :mod:`dustdev.loopproxy`: a loopback forward proxy for the crawler tests;
* :mod:`dustdev.reference`: the naive Figure 1 miner the engine is checked against;
* :mod:`dustdev.checkref`: the per-candidate fetch-free checks the one-pass index is checked against.
* :mod:`dustdev.parsers`: the reference parsers as a parser table (``REFERENCE_PARSERS``) and
  ``reference_parsers()``, which puts them in place of the fast paths;
* :mod:`dustdev.supports`: Figure 1's supports of a ``SiteSupports`` (the batch engine's count);
* :mod:`dustdev.dashboard`: the dashboard's version log hooked onto an already built follower.
"""
