"""What the rules are worth and where they go: the content truth of a log, the papers' metrics
(discovered redundancy and coverage, WWW 2007 §3; the crawl simulation of SIGIR 2017 §3.2), the
pairs a learned canonizer trains on, a site report, and exports for other crawlers.

The top stage of the core: it may import every stage below it.
"""
