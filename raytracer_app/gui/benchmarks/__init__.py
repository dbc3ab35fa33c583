"""The benchmark panels: one BenchPanel per algorithm (panel), its table, saved runs and baseline
(panel_table, panel_results), Nsight Compute's Measure (measure), the shipped GPU references
(reference_results, reference_picker), the panels' specs (algorithms) and the worker (worker)."""
