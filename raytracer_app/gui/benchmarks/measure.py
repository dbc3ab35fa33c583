"""A benchmark panel's Measure action: Nsight Compute's counters for the panel's selected GPU variants, in a
worker thread (ncu runs a child process; Stop ends it within a second), shown in the table's tooltips and
handed to the Inspector's Measured tab. With *Run on* a cluster (run_on.py) the one ncu run happens on a GPU
worker of the cluster (its model with the most GPUs), as the panel's Run does there; Stop reaches it. Disabled,
with the reason as its tooltip, where counters cannot be read (no GPU, no ncu; a cluster without a GPU); a
refusal found only when ncu runs (no permission) is the status line."""

from __future__ import annotations

from PyQt6.QtCore import QObject, pyqtSignal, pyqtSlot
from PyQt6.QtWidgets import QPushButton

from kernels.errors import InputError
from kernels.launch import Launch
from raytracer_app.gui.benchmarks.panel_table import is_ghost
from raytracer_app.gui.common.counters_text import counters_tooltip
from raytracer_app.gui.common.run_on import resources_for, run_on
from raytracer_app.gui.common.workers import JobWorker, WorkerThread, describe


class MeasureWorker(JobWorker):
    progress = pyqtSignal(int, int, str)
    done = pyqtSignal(object, bool)  # {variant: Measured or reason}, stopped
    failed = pyqtSignal(str)

    @pyqtSlot(object)
    def _run(self, job: dict) -> None:
        from kernels.counters.measure import measure

        got = {}
        job = dict(job)
        client = job.pop("client", None)
        try:
            if client is not None:  # Run on a cluster: its GPU measures
                got = self._on_cluster(client, job["request"])
            else:
                got = measure(on_progress=lambda d, t, text: self.progress.emit(d, t, text),
                              should_stop=self._stop.is_set, **job)
        except Exception as exc:  # noqa: BLE001 - CannotMeasure's one line, or what broke
            self.failed.emit(describe(exc))
        finally:
            self._running.clear()
        self.done.emit(got, self._stop.is_set())

    def _on_cluster(self, client, request: dict) -> dict:
        """The one ncu run on a GPU worker of the cluster; Stop reaches it (ncu's child ends there)."""
        from kernels.backend import Backend
        from kernels.cluster import remote, worker_side

        resources = resources_for(client, Backend("cuda"))
        total = len(request["variants"])
        self.progress.emit(0, total, f"measuring on the cluster's {', '.join(resources or ()) or 'GPU'}…")
        return remote.call(client, worker_side.measure_counters, request, resources=resources,
                           stop=self._stop.is_set) or {}


class MeasureControl(QObject):
    """The Measure button of one panel and its worker. ``measured(target, n, results)`` when counters came."""

    measured = pyqtSignal(str, int, object)

    def __init__(self, panel):
        super().__init__(panel)
        self.panel = panel
        self.results: dict = {}
        self.button = QPushButton("Measure")
        self.button.clicked.connect(self.start)
        self.worker = MeasureWorker()
        self.thread = WorkerThread(self.worker, f"measure-{panel.spec.title}")
        self.worker.progress.connect(self._progress)
        self.worker.failed.connect(lambda text: panel._say(text, error=True))
        self.worker.done.connect(self._done)
        self.thread.start()
        self._running = False
        run_on().changed.connect(self._where_changed)
        self.refresh()

    def reason(self) -> str:
        """'' where counters can be tried (the window's backend, or Run on a cluster with a GPU: ncu is checked
        there), else the one line saying why not."""
        from kernels.counters.tool import why_not

        if not any(v.kind == "gpu" for v in self.panel.spec.variants):
            return "this benchmark has no GPU kernels of its own to measure"
        where = run_on()
        if where.remote:
            return "" if where.models else ("counters cannot be read: needs a CUDA GPU, and the cluster's workers "
                                            "(Run on) have none")
        return why_not(self.panel.model.backend)

    def refresh(self) -> None:
        why = self.reason()
        self.button.setEnabled(not why and not self._running and not self.panel.busy())
        where = run_on()
        place = f"on the cluster's {where.models[0]} (Run on)" if where.remote and where.models else "here"
        self.button.setToolTip(why or "read the selected GPU variants' hardware counters with Nsight Compute "
                                      f"(one ncu run in a child process, {place}); Stop ends it")

    @pyqtSlot(str)
    def _where_changed(self, _state: str) -> None:
        self.refresh()

    def job(self) -> dict | None:
        """The measurement: the panel's request narrowed to its size, one launch and its runnable GPU
        variants (None when none is selected); InputError for a value the panel refuses."""
        panel = self.panel
        backend, client = panel.model.backend, run_on().client
        # on a cluster its GPU's counters child says which cannot run there (this machine's backend cannot)
        names = [v.name for v in panel.spec.variants if v.name in panel.selected_variants() and v.kind == "gpu"
                 and (client is not None or v.skip_reason(backend) is None)]
        if not names:
            return None
        launch = Launch() if panel.default_launch.isChecked() else \
            Launch(block=panel.block_size(), grid_sm=panel.grid_sm.value() or None)
        request = panel.request(sizes=(panel.n.value(),), launches=(launch,), variants=tuple(names), rounds=1,
                                repeats=1)
        if client is not None:
            return dict(request=request.to_json(), client=client)
        return dict(request=request.to_json(), backend=backend)

    def start(self) -> bool:
        try:
            job = self.job()
        except InputError as exc:
            self.panel._say(str(exc), error=True)
            return False
        if job is None:
            self.panel._say("choose at least one GPU variant to measure", error=True)
            return False
        self._running = True
        self._n = job["request"]["sizes"][0]
        self.refresh()
        self.panel.run_button.setEnabled(False)
        self.panel.stop_button.setEnabled(True)
        where = run_on()
        place = f" on the cluster's {where.models[0]}" if job.get("client") is not None and where.models else ""
        self.panel._say(f"measuring {len(job['request']['variants'])} variant(s) with ncu{place}…")
        self.worker.start(job)
        return True

    def stop(self) -> None:
        if self._running:
            self.worker.stop()

    @property
    def running(self) -> bool:
        return self._running

    def _progress(self, done: int, total: int, text: str) -> None:
        self.panel.progress.setRange(0, total)
        self.panel.progress.setValue(done)
        self.panel.status.setText(f"ncu: {text}")

    def _done(self, results, stopped: bool) -> None:
        self._running = False
        self.panel.run_button.setEnabled(True)
        self.panel.stop_button.setEnabled(False)
        self.refresh()
        if stopped:
            self.panel._say("measuring stopped")
            return
        if not results:
            return
        self.results = results
        for row, _ in self.panel.rows:  # the panel's rows of that size carry them into Export CSV / JSON
            got = results.get(row.variant)
            if got is not None and row.n == self._n:
                row.counters, row.counters_note = (None, got) if isinstance(got, str) else (got, "")
        self.show_in_table()
        got = sum(not isinstance(v, str) for v in results.values())
        self.panel._say(f"counters for {got} of {len(results)} variant(s): hover a variant's name, or see the "
                        "Inspector's Measured tab")
        self.measured.emit(self.panel.spec.name, self._n, results)

    def show_in_table(self) -> None:
        table = self.panel.table
        for r in range(table.rowCount()):
            item = table.item(r, 0)
            if item is not None and item.text() in self.results and not is_ghost(item):  # measured here only
                item.setToolTip(counters_tooltip(item.text(), self.results[item.text()], self._n))

    def shutdown(self) -> None:
        self.worker.stop()
        self.thread.shutdown()
