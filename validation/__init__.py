"""The papers' experiments at full length, each figure printed beside the paper's.

``python -m validation`` (``make validate``) runs the reproductions of the three papers
snarl is built against and writes their tables, in Markdown, to standard output and to
``out/validate/figures.md``; ``docs/validation.md`` quotes them. Runs are cached under
``out/validate/runs`` by the hash of their resolved config, so an interrupted validation
resumes and a second one only recomputes the tables. ``--quick`` runs every experiment
shortened, one point per sweep, to check the machinery (the tests do).

One module per paper: :mod:`validation.endpoint` (Postigo et al.),
:mod:`validation.infiniband` (Gran et al.), :mod:`validation.isolation` (Merino et al.).
"""
