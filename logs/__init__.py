"""Reading server logs: one table of the log formats (formats.py), one reference parser per format
(parsers.py, with fast paths in fastparse.py, over the shared context, record and URL rules of
record.py) and the reader that turns files and topic batches into records and URL lists, every
rejected line counted (reader.py).  Imports only dustbuster.core."""
