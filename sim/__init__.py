"""The DUST site simulator: a realistic site with known ground truth (sim/forum.py: the forum and its truth; sim/site.py: its server)."""
