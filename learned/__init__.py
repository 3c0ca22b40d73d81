"""The learned canonizer of the seq2seq paper (docs/learned.md): optional extra ``[learned]``."""
