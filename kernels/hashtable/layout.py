"""The chained table's layout, shared by the host check and the kernels: -1 ends a chain or marks an empty
bucket."""

EMPTY = -1
