"""*Run on*: where the window's benchmark runs happen, this machine or a Dask cluster (docs/cluster.md), with
its state always in view. One :class:`RunOn` model for the window (``run_on()``); :class:`RunOnControl` is its
widget (the status bar holds it). Connecting and asking the cluster for its workers happen on a worker thread
(:class:`ClusterConnector`): the GUI thread never waits on the network. Dask is imported only once a cluster
is chosen."""

from __future__ import annotations

import threading

from PyQt6.QtCore import QObject, pyqtSignal, pyqtSlot
from PyQt6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QWidget

from raytracer_app.gui.common.workers import JobWorker, WorkerThread, describe

HERE, CLUSTER = "This machine", "Cluster"


class RunOn(QObject):
    """Where runs go: ``client`` None runs here; else the connected cluster's Dask client. ``state`` says it in
    words ('this machine', 'connecting to ...', 'tcp://...: 2 workers (cpu and sim)', 'unreachable: ...')."""

    changed = pyqtSignal(str)  # the state's words

    def __init__(self):
        super().__init__()
        self.client = None
        self.models: list = []  # the connected cluster's GPU models (its workers' resources), [] for none
        self.address: str | None = None
        self.state = "this machine"
        self._lock = threading.Lock()
        self._connector: ClusterConnector | None = None
        self._thread: WorkerThread | None = None

    @property
    def remote(self) -> bool:
        return self.client is not None

    def use_here(self) -> None:
        self._drop_client()
        self.address = None
        self._say("this machine")

    def use_cluster(self, address: str, certs: str | None = None) -> None:
        """Connect on the connector's thread; ``changed`` says when it is done, or why it failed."""
        self._drop_client()
        self.address = address
        if self._connector is None:
            self._connector = ClusterConnector()
            self._thread = WorkerThread(self._connector, "cluster-connect")
            self._connector.connected.connect(self._connected)
            self._connector.failed.connect(self._failed)
            self._thread.start()
        self._say(f"connecting to {address} ...")
        self._connector.start((address, certs))

    @pyqtSlot(object, str, object)
    def _connected(self, client, summary: str, models) -> None:
        with self._lock:
            self.client, self.models = client, list(models)
        self._say(summary)

    @pyqtSlot(str)
    def _failed(self, message: str) -> None:
        self._say(f"not connected: {message}")

    def _drop_client(self) -> None:
        with self._lock:
            client, self.client, self.models = self.client, None, []
        if client is not None:
            threading.Thread(target=client.close, name="cluster-close", daemon=True).start()  # never waits here

    def _say(self, text: str) -> None:
        self.state = text
        self.changed.emit(text)

    def shutdown(self) -> None:
        self._drop_client()
        if self._thread is not None:
            self._thread.shutdown(15000)
        self._connector = self._thread = None  # a later window connects on a thread of its own again


class ClusterConnector(JobWorker):
    """Connects to a cluster and lists its workers, on its own thread."""

    connected = pyqtSignal(object, str, object)  # the client, a summary of its workers, its GPU models
    failed = pyqtSignal(str)

    @pyqtSlot(object)
    def _run(self, job) -> None:
        address, certs = job
        try:
            from kernels.cluster import remote

            client = remote.connect(address, certs)
            found = remote.workers(client)
            models = sorted({w.model for w in found if w.model})
            kinds = ", ".join(models) if models else "cpu and sim"
            self.connected.emit(client, f"{client.scheduler.address}: {len(found)} worker(s) ({kinds})", models)
        except Exception as exc:  # noqa: BLE001 - a bad or unreachable address: the state line says it
            self.failed.emit(describe(exc))
        finally:
            self._running.clear()


def resources_for(client, backend):
    """The worker resources a run on ``backend`` asks the cluster for: a GPU model's (the one with the most
    GPUs) for a GPU backend, none (any worker) for cpu and sim."""
    from kernels.cluster import remote

    (_, resources), = remote.targets(client, None, backend).items()
    return resources


_RUN_ON: RunOn | None = None


def run_on() -> RunOn:
    """The window's one *Run on* model."""
    global _RUN_ON
    if _RUN_ON is None:
        _RUN_ON = RunOn()
    return _RUN_ON


class RunOnControl(QWidget):
    """*Run on:* [This machine | Cluster] [address] and the state in words, always visible."""

    def __init__(self, model: RunOn | None = None, parent=None):
        super().__init__(parent)
        self.model = model or run_on()
        self.choice = QComboBox()
        self.choice.addItems([HERE, CLUSTER])
        self.choice.setToolTip("Where benchmark runs happen: here, or on a Dask cluster (docs/cluster.md)")
        self.address = QLineEdit()
        self.address.setPlaceholderText("HOST:PORT or tls://HOST:PORT")
        self.address.setToolTip("The cluster's scheduler (raytracer-app cluster start prints it); Enter connects")
        self.address.setVisible(False)
        self.state = QLabel(self.model.state)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("Run on:"))
        layout.addWidget(self.choice)
        layout.addWidget(self.address)
        layout.addWidget(self.state)
        self.choice.currentTextChanged.connect(self._chosen)
        self.address.returnPressed.connect(self._connect)
        self.model.changed.connect(self.state.setText)

    def _chosen(self, text: str) -> None:
        self.address.setVisible(text == CLUSTER)
        if text == HERE:
            self.model.use_here()
        elif self.address.text().strip():
            self._connect()
        else:
            self.state.setText("type the cluster's address, then Enter")
            self.address.setFocus()

    def _connect(self) -> None:
        import os

        from kernels.cluster import CERTS_ENV

        text = self.address.text().strip()
        if text:
            self.model.use_cluster(text, os.environ.get(CERTS_ENV) or None)
