"""snarl.progress: the progress bar drawn on stderr."""

from __future__ import annotations

from snarl.progress import progress_bar


def test_progress_bar_accepts_any_fraction(capsys):
    with progress_bar("testing") as update:
        for fraction in (-0.5, 0.0, 0.25, 1.0, 3.0):
            update(fraction)
    out, _ = capsys.readouterr()
    assert out == ""  # never on stdout
