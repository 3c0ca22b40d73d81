"""stream: the Kafka-facing edge: the app factory and topics, the settings, the records and their
decoders, the changelogs, the producer and the rules-topic follower.

Importing this package imports no Faust; the app lives in ``dustbuster.stream.app`` and is imported
only by the entry point and ``agents/``.
"""
