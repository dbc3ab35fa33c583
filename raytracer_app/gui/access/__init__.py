"""The Access tool (issue 36): what each warp of a GPU variant does to memory, line by line, from a run traced in
the CUDA simulator's child process (kernels/access). The kernel's Python source with a heat column per line
(listing: no widgets), a picture of one warp request (picture), two variants side by side, each traced by its
own worker (view, worker)."""
