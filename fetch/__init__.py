"""Fetching pages for the validator over HTTP (aiohttp): safe, polite and counted (client.py).
Imports only dustbuster.core."""
