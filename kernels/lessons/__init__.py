"""Lessons: the classic optimisation steps of an algorithm replayed on this machine, step by step.

A lesson (:mod:`.lesson`) declares ordered steps: a variant of one algorithm, the launch and options it runs
with, the idea it adds, the published figure it is known by (Harris's G80 table for the reduction) and the
static facts that explain it. :mod:`.run` runs every step through the benchmark harness (same size, repeats
and verification as ``bench``) and computes each step's bandwidth, its share of the spec and of the measured
copy bandwidth, step and cumulative speedups, the inspector's evidence and a sentence on whether the step
still pays here. Without a GPU the steps are verified in the CUDA simulator and nothing is reported as a
measurement. :mod:`.report` writes the table, CSV and Markdown. The lessons are listed in :mod:`.catalog`.

Imports neither Qt nor the app; importing this package imports no numba.
"""
