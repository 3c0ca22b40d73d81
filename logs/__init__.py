"""Reading server logs: one parser per log format (formats.py, with fast paths in fastparse.py) and the
reader that turns files into records and URL lists, every rejected line counted (reader.py).
Imports only dustbuster.core."""
