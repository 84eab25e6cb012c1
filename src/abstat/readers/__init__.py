"""Readers: sample files, ministat input, peers' exports, summaries, file-name patterns."""


def display_text(text: str) -> str:
    """``text`` with the bytes of a non-UTF-8 file name (``os.fsdecode``'s lone surrogates) shown as
    ``\\xff``: fit for labels, plots and stores, which need real text.  Reading still uses the name."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
