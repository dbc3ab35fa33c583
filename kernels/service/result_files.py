"""A result file as the service reads it: the harness's reader (schema, rows, samples, bounds) and then its
header's request through the one request validator (:func:`kernels.service.bench_request.check_json`), so a
request that arrives in a file is checked field by field as one arriving from a child or a cluster is."""

from __future__ import annotations

import os

from kernels.errors import InputError
from kernels.harness.results import Result
from kernels.harness.results_read import read_result as read_file


def read_result(path, option: str) -> Result:
    """The result file at ``path``, validated, its header's request too (one InputError naming the file)."""
    result = read_file(path, option)
    check_request_header(result, f"{option} {os.fspath(path)!r}")
    return result


def check_request_header(result: Result, label: str) -> None:
    from kernels.service.bench_request import check_json

    if result.request is None:  # files before the request was recorded hold only the options
        return
    try:
        check_json(result.request)
    except InputError as exc:
        raise InputError(f"{label}: {exc}") from None
