"""The Inspector: a GPU variant's source, PTX and SASS (panel), with its Roofline, Compare and Measured tabs
(dock, roofline_chart)."""
