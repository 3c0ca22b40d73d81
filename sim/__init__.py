"""The DUST site simulator: a realistic site with known ground truth (issue 4)."""
