"""dustbuster: the command-line entry point (``dustbuster --help``)."""

__version__ = "0.1.0"
