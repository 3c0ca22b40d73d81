"""dustbuster.core.report.evaluate: the papers' metrics worked by hand (WWW 2007 §3, thesis §6.6-6.7, SIGIR 2017 §3.2)."""

from __future__ import annotations

import pytest

from dustbuster.core.report.evaluate import Page, by_class, consistent, score

D = "http://domain"
# SIGIR 2017 Table 3, cases 1-4, as a URL list in crawl order with its content clusters:
# A = question 132218, B = user 150781, C = questions tagged google, D = the page /q/tagged (a
# different page), E = the constant "private message" page every /set/<user> shows.
SEQ2SEQ = [
    Page(f"{D}/q/132218", "A", "q"),
    Page(f"{D}/questions/132218/", "A", "questions"),
    Page(f"{D}/users/150781", "B", "users"),
    Page(f"{D}/users/150781/rich", "B", "users"),
    Page(f"{D}/questions/tagged/google", "C", "questions"),
    Page(f"{D}/q/tagged", "D", "q"),
    Page(f"{D}/private-message/set/Yovav", "E", "private-message"),
    Page(f"{D}/private-message/set/anzer", "E", "private-message"),
]
# the rule-based column of Table 3: right on cases 1, 2 and 4, wrong on case 3
RULE_BASED = {
    f"{D}/questions/132218/": f"{D}/q/132218",
    f"{D}/users/150781/rich": f"{D}/users/150781",
    f"{D}/questions/tagged/google": f"{D}/q/tagged",
    f"{D}/private-message/set/anzer": f"{D}/private-message/set/Yovav",
}


def test_keepall_by_hand():
    """KeepAll crawls all 8 URLs; they cover the 5 clusters: Prec = 5/8, Rec = 1, F1 = 10/13."""
    s = score(SEQ2SEQ, lambda u: u)
    assert (s.urls, s.clusters, s.crawled, s.covered) == (8, 5, 8, 5)
    assert s.precision == pytest.approx(5 / 8) and s.recall == 1.0
    assert s.f1 == pytest.approx(2 * (5 / 8) * 1 / (5 / 8 + 1)) == pytest.approx(10 / 13)
    assert s.redundancy == 0.0 and s.coverage == 0.0 and s.removed_share == 0.0
    assert s.false_merge_groups == 0 and s.false_merge_urls == 0
    assert consistent(s) == []


def test_seq2seq_crawl_simulation_by_hand():
    """The rule-based canonicalizer of Table 3, crawl simulation of §3.2 worked by hand:

    visit 1 /q/132218 → new, crawl (A);  2 → /q/132218 seen, skip;  3 /users/150781 → crawl (B);
    4 → seen, skip;  5 /questions/tagged/google → canonical /q/tagged new, crawl (C);
    6 /q/tagged → seen (URL 5), skip: D is never crawled;  7 → crawl (E);  8 → seen, skip.
    #Crawled = 4, #Covered = |{A, B, C, E}| = 4, #Clusters = 5:
    Prec = 4/4 = 1, Rec = 4/5 = 0.8, F1 = 2·1·0.8/1.8 = 8/9.
    WWW 2007: U_b = 8, U_a = 4, redundancy 4/8; D_b = 8 − 5 = 3, D_a = 4 − 4 = 0, coverage 1;
    removed correctly: URLs 2, 4, 8 (same page as the fetched one) = 3 of D_b = 3;
    false merges: the group /q/tagged = {5 (C), 6 (D)}: 1 group, 1 URL (6) lost."""
    s = score(SEQ2SEQ, lambda u: RULE_BASED.get(u, u))
    assert (s.crawled, s.covered, s.clusters) == (4, 4, 5)
    assert s.precision == 1.0 and s.recall == pytest.approx(0.8) and s.f1 == pytest.approx(8 / 9)
    assert s.redundancy == pytest.approx(0.5)
    assert (s.duplicates_before, s.duplicates_after) == (3, 0) and s.coverage == 1.0
    assert s.removed_correctly == 3 and s.removed_share == 1.0
    assert (s.false_merge_groups, s.false_merge_urls) == (1, 1)
    ex = s.examples[0]
    assert ex.canonical == f"{D}/q/tagged" and [c for _, c in ex.urls] == ["C", "D"]
    assert consistent(s) == []


def test_the_oracle_is_perfect():
    oracle = {p.url: p.cluster for p in SEQ2SEQ}
    s = score(SEQ2SEQ, lambda u: oracle[u])
    assert s.precision == s.recall == s.f1 == 1.0 and s.coverage == 1.0 and s.false_merge_groups == 0


def test_crawl_order_decides_which_cluster_a_false_merge_keeps():
    """Same canonicalizer, URL 6 visited before URL 5: D is crawled and C is lost."""
    order = SEQ2SEQ[:4] + [SEQ2SEQ[5], SEQ2SEQ[4]] + SEQ2SEQ[6:]
    s = score(order, lambda u: RULE_BASED.get(u, u))
    assert (s.crawled, s.covered, s.recall) == (4, 4, 0.8)
    assert [c for _, c in s.examples[0].urls] == ["D", "C"]


def test_partial_coverage_www2007():
    """Clusters A×3, B×2, C×1; the rules merge two of the three A URLs only.
    U_b = 6, U_a = 5: redundancy 1/6.  D_b = 6 − 3 = 3, D_a = 5 − 3 = 2: coverage 1/3."""
    pages = [Page("a1", "A"), Page("a2", "A"), Page("a3", "A"), Page("b1", "B"), Page("b2", "B"), Page("c", "C")]
    s = score(pages, lambda u: "a1" if u == "a2" else u)
    assert s.redundancy == pytest.approx(1 / 6)
    assert (s.duplicates_before, s.duplicates_after) == (3, 2)
    assert s.coverage == pytest.approx(1 / 3) and s.removed_share == pytest.approx(1 / 3)
    assert s.precision == pytest.approx(3 / 5) and s.recall == 1.0


def test_merging_everything_shows_as_false_merges_not_as_coverage():
    """One canonical URL for all: the paper's coverage is 1 (no duplicate left), but 2 of 3
    clusters are lost; the false merges and the recall say so, and 'removed correctly' counts only
    the URLs whose page is the fetched one."""
    pages = [Page("a1", "A"), Page("a2", "A"), Page("b1", "B"), Page("c", "C")]
    s = score(pages, lambda u: "x")
    assert s.coverage == 1.0 and s.redundancy == 0.75
    assert (s.false_merge_groups, s.false_merge_urls) == (1, 2)
    assert s.removed_correctly == 1 and s.removed_share == 1.0
    assert s.recall == pytest.approx(1 / 3) and s.precision == 1.0
    assert consistent(s) == []


def test_no_duplicates_no_coverage():
    s = score([Page("a", 1), Page("b", 2)], lambda u: u)
    assert s.coverage is None and s.removed_share is None and s.precision == 1.0


def test_per_class_scores_are_each_class_alone():
    per = by_class(SEQ2SEQ, lambda u: RULE_BASED.get(u, u))
    assert list(per) == ["private-message", "q", "questions", "users"]  # 2 URLs each: by name
    assert sum(s.urls for s in per.values()) == len(SEQ2SEQ)
    # /questions/tagged/google and /q/tagged are in different classes: no false merge within either
    assert per["q"].false_merge_groups == 0 and per["questions"].false_merge_groups == 0
    assert per["users"].redundancy == 0.5 and per["users"].coverage == 1.0


def test_consistency_check_finds_an_impossible_score():
    from dustbuster.core.report.evaluate import Scores

    assert "covered <= crawled" in consistent(Scores(5, 3, 2, 3, 0, 0, 0))
