"""stream: the Kafka-facing edge (app factory, settings, topics, records) and the log parsers.

Importing this package imports no Faust; the app lives in ``dustbuster.stream.app`` and is imported only by
the entry point and ``agents/``.
"""
