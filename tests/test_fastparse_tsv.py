"""The TSV fast path (logs/fastparse.py ``parse_tsv``) gives exactly what the reference parser
(dustbuster.logs.parsers.parse_tsv) gives: the same record, skip, or reject reason and detail, on
every row of the real TSV logs, on every other real log line read as TSV, and on generated rows
(Hypothesis) under several header layouts and contexts; and it is the path the real rows take."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dustbuster.logs import fastparse
from dustbuster.logs.formats import PARSERS, tsv_header
from dustbuster.logs.record import Context, Limits

from dustdev.parsers import REFERENCE_PARSERS
from tests.conftest import LOGS
from tests.test_fastparse import mostly, number, odd_text, outcome, real_lines, status, target, vhost

NASA = sorted((LOGS / "nasa-ksc-1995-tsv-sample").glob("*.tsv"))
HEADERS = [
    "host\tlogname\ttime\tmethod\turl\tresponse\tbytes",  # the NASA layout
    "url\tstatus",
    "path\tsize\tstatus\tmethod",
    "vhost\trequest\tresponse\tbytes",
    "method\tvhost\tbytes\tstatus\turl\textra",
]


def contexts(header: str) -> list[Context]:
    cols = tsv_header(header)
    assert cols is not None
    return [Context(site="www.Example.com", tsv_columns=cols),
            Context(site=None, tsv_columns=dict(cols)),
            Context(site="h.org:443", scheme="https", limits=Limits(max_url_length=60, max_tokens=12),
                    tsv_columns=dict(cols))]


def assert_same_tsv(line: str, header: str = HEADERS[0]) -> None:
    for ctx in contexts(header):
        fast, ref = outcome(PARSERS["tsv"], line, ctx), outcome(REFERENCE_PARSERS["tsv"], line, ctx)
        assert fast == ref, (ctx, line)


def test_every_real_tsv_row_parses_as_the_reference_does():
    rows = [ln for p in NASA for ln in p.read_text(encoding="utf-8").splitlines()]
    assert len(rows) > 40_000
    for line in rows:
        assert_same_tsv(line)
    for line in rows[::11]:
        for header in HEADERS[1:]:
            assert_same_tsv(line, header)


def test_other_real_lines_read_as_tsv_as_the_reference_does():
    for line in real_lines()[::5]:
        assert_same_tsv(line)
        assert_same_tsv(line, HEADERS[3])


def test_no_header_is_the_reference_reject():
    ctx = Context(site="h.org")
    assert outcome(PARSERS["tsv"], "a\t/x\t200", ctx) == outcome(REFERENCE_PARSERS["tsv"], "a\t/x\t200", ctx)


def test_the_fast_path_takes_the_real_rows():
    """Not a speed test: the real rows must take the fast path, not the reference."""
    path = NASA[0]
    lines = path.read_text(encoding="utf-8").splitlines()
    ctx = Context(site="www.example.com", tsv_columns=tsv_header(lines[0]))
    taken = sum(1 for ln in lines[1:] if fastparse._fast_tsv(ln, ctx, ctx.tsv_columns) is not None)
    assert taken > 0.99 * (len(lines) - 1)


tsv_method = mostly(st.sampled_from(["GET", "GET", "HEAD", "POST"]),
                    st.sampled_from(["OPTIONS", "get", "PROPFIND", "", "GET ", "method", "\u0120GET"]))
tsv_number = st.one_of(number, status, st.sampled_from(["+5", " 5", "5 ", "1_000", "²", "٣", "0x1f", "00012"]))
cell = st.one_of(odd_text, st.sampled_from(["-", "", "x", "804571201"]))


@st.composite
def tsv_row(draw) -> tuple[str, str]:
    header = draw(st.sampled_from(HEADERS))
    names = header.split("\t")
    fields = []
    for name in names:
        if name in ("url", "path", "request"):
            fields.append(draw(target))
        elif name in ("response", "status", "bytes", "size"):
            fields.append(draw(tsv_number))
        elif name == "method":
            fields.append(draw(tsv_method))
        elif name == "vhost":
            fields.append(draw(vhost))
        else:
            fields.append(draw(cell))
    if draw(st.integers(0, 9)) == 9:
        fields = fields[:draw(st.integers(0, len(fields)))]
    tail = draw(mostly(st.sampled_from(["", "\t\t", "\t"]), st.sampled_from(["\n", "\t\n", "\r", " ", "\tx\ty"])))
    return header, "\t".join(fields) + tail


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tsv_row())
@example((HEADERS[0], "h\t-\t1\tGET\t/a#f\t200\t0\t\t"))
@example((HEADERS[0], "h\t-\t1\tGET\t/a\t200\t²\t\t"))
@example((HEADERS[0], "h\t-\t1\tHEAD\t/a\t-\t12\t\t"))
@example((HEADERS[3], "\t/a\t304\t5"))
@example((HEADERS[3], "h.org:80\thttp://Other.ORG:80/x\t200\t0"))
def test_generated_tsv_rows_parse_as_the_reference_does(case):
    header, line = case
    assert_same_tsv(line, header)
