"""The learned canonizer of the seq2seq paper (issue 15, docs/learned.md): optional extra ``[learned]``."""
