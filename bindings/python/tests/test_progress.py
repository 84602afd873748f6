"""snarl.progress: the progress bar drawn on stderr."""

from __future__ import annotations

import rich.progress

from snarl.progress import progress_bar


def test_progress_bar_clamps_fractions_to_the_bar(monkeypatch, capsys):
    shown = []
    real_update = rich.progress.Progress.update

    def recording_update(self, task, **fields):
        if "completed" in fields:
            shown.append(fields["completed"])
        return real_update(self, task, **fields)

    monkeypatch.setattr(rich.progress.Progress, "update", recording_update)
    with progress_bar("testing") as update:
        for fraction in (-0.5, 0.0, 0.25, 1.0, 3.0):
            update(fraction)
    assert shown == [0.0, 0.0, 0.25, 1.0, 1.0]
    out, _ = capsys.readouterr()
    assert out == ""  # never on stdout
