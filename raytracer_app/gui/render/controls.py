"""The controls dock: backend, image size, launch shape, sphere scene and Julia parameters.

Widgets write into the RenderModel and follow its ``changed`` signal; ``_sync`` copies the model into
the widgets with their signals blocked, so nothing echoes back."""

from __future__ import annotations

from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtWidgets import (
    QAbstractButton, QAbstractSpinBox, QApplication, QButtonGroup, QGridLayout, QCheckBox, QComboBox, QFormLayout, QGroupBox, QHBoxLayout,
    QLabel, QPushButton, QRadioButton, QScrollArea, QSlider, QSpinBox, QVBoxLayout, QWidget,
)

from kernels import backend as backends
from kernels.errors import InputError
from kernels.harness.frames import parse_size
from kernels.julia import COLORMAPS, MAX_ITERATIONS
from kernels.spheres.layout import PATTERNS
from kernels.spheres.scene import load_scene, presets, save_scene
from raytracer_app.gui.common.dialogs import ask_path
from raytracer_app.gui.common.saving import in_background, message_of
from raytracer_app.gui.common.sim_limits import SIM_MAX_REPEATS, SIM_MAX_SIDE
from raytracer_app.gui.render.count_control import SphereCountControl
from raytracer_app.gui.common.slider_spin import SliderSpin
from raytracer_app.gui.render.kind_controls import KindControls
from raytracer_app.gui.render.models import HAND_BUILT, JULIA, JULIA_PRESETS, KINDS, PRECISION_MODES, SPHERES

SIZES = ("64x64", "128x128", "256x256", "512x512", "1000x1000", "1024x1024", "2048x2048", "4096x4096")
CPU_MEMORY_TIP = "the CPU backend has no GPU memory spaces: spheres are read from host memory"
MEMORY_TIPS = {
    "global": "the book's first kernel: every thread reads the spheres from global memory",
    "constant": "the book's second kernel: spheres in __constant__ memory, one address broadcast to a warp",
    "shared": "each block keeps only the spheres that can touch its tile, staged in shared memory",
    "binned": "the spheres are first sorted into screen tiles, then each block shades its tile from its own "
              "list (how tiled GPU rasterisers work; interactive up to a million spheres)",
    "sorted": "binned tiles whose lists are sorted nearest first: each pixel stops at the first sphere that "
              "cannot be nearer (the fastest at many spheres)",
}
PRECISION_TIP = ("float32: fast, pixelates past a zoom of about 10^4; float64: exact to about 10^13 (half the "
                 "speed on an H100, 1/32 to 1/64 on consumer GPUs); auto: float64 once float32 no longer "
                 "resolves neighbouring pixels")
CPU_BLOCK_TIP = "the CPU backend runs image rows in parallel; the block shape applies to CUDA backends"
# how a user without a GPU still reaches the GPU controls (said in their tooltips and the link in Backend)
SIM_WAY = "\nRender > Restart with the CUDA Simulator runs the CUDA kernels without a GPU (slowly, small images)"
SIM_LINK = ('GPU controls (memory, thread blocks, Compare memory) need a CUDA backend: '
            '<a href="restart">Restart with the CUDA Simulator</a> runs the kernels without a GPU')
CUSTOM = "(custom)"  # a preset combo's text once a value differs from every preset


def _combo(items, tip: str = "") -> QComboBox:
    c = QComboBox()
    c.addItems([str(i) for i in items])
    c.setToolTip(tip)
    return c


def _set_item_enabled(combo: QComboBox, index: int, enabled: bool, tip: str = "") -> None:
    item = combo.model().item(index)
    item.setEnabled(enabled)
    item.setToolTip(tip)


class Controls(QScrollArea):
    """The dock's contents. ``compareRequested`` asks the main window to run Compare memory."""

    compareRequested = pyqtSignal()
    restartRequested = pyqtSignal()  # the "Restart with the CUDA Simulator" link

    def __init__(self, model):
        super().__init__()
        self.model = model
        body = QWidget()
        lay = QVBoxLayout(body)
        lay.addWidget(self._backend_group())
        lay.addWidget(self._launch_group())
        self.spheres_box = self._spheres_group()
        self.julia_box = self._julia_group()
        lay.addWidget(self.spheres_box)
        lay.addWidget(self.julia_box)
        # every other render kind: its controls made from its descriptor
        self.kind_boxes = {name: KindControls(model, kind) for name, kind in KINDS.items() if name not in HAND_BUILT}
        for box in self.kind_boxes.values():
            lay.addWidget(box)
        lay.addStretch(1)
        self.setWidget(body)
        self.setWidgetResizable(True)
        inputs = (QAbstractButton, QComboBox, QAbstractSpinBox, QSlider, SliderSpin)
        self._inputs = [w for w in body.findChildren(QWidget) if isinstance(w, inputs)]
        model.changed.connect(self._sync)
        self._sync("backend")

    # ------------------------------------------------------------------ groups
    def _backend_group(self) -> QGroupBox:
        box = QGroupBox("Backend")
        form = QFormLayout(box)
        self.backend = _combo([c.name for c in backends.CHOICES], "which backend renders and runs the benchmarks")
        self.backend.textActivated.connect(self._backend_chosen)
        form.addRow("Backend", self.backend)
        self.gpu = _combo([], "which GPU renders")
        self.gpu.activated.connect(lambda _: self._backend_chosen(self.backend.currentText()))
        self.gpu_label = QLabel("GPU")
        form.addRow(self.gpu_label, self.gpu)
        # asking for GPUs imports numba.cuda (0.3 s) and starts the driver, which a CPU window's first frame
        # does not need: there the main window calls refresh_backend_choices once that frame is shown
        self.refresh_backend_choices(check_gpus=not self.model.backend.is_host)
        self.device = QLabel()
        self.device.setWordWrap(True)
        form.addRow(self.device)
        self.sim_link = QLabel(SIM_LINK)
        self.sim_link.setWordWrap(True)
        self.sim_link.setToolTip("closes the window (saving everything) and starts the app with --backend sim")
        self.sim_link.linkActivated.connect(lambda _: self.restartRequested.emit())
        form.addRow(self.sim_link)
        self.size = _combo(SIZES, "image size WxH (type your own, 1..4096 each)")
        self.size.setEditable(True)
        self.size.lineEdit().editingFinished.connect(lambda: self._size_chosen(self.size.currentText()))
        self.size.textActivated.connect(self._size_chosen)
        form.addRow("Image size", self.size)
        self.size_note = QLabel()
        self.size_note.setWordWrap(True)
        form.addRow(self.size_note)
        return box

    def refresh_backend_choices(self, check_gpus: bool = True) -> None:
        """Enable the backends this process can switch to, saying why the others cannot run, and list the
        GPUs when there is more than one. Without ``check_gpus`` the cuda entry waits for a later call."""
        for index, choice in enumerate(backends.CHOICES):
            if choice.is_gpu and not check_gpus:
                why = "checking for a CUDA GPU…"
            else:
                why = backends.unavailable_reason(choice.name)
            _set_item_enabled(self.backend, index, not why, f"{choice.description}" + (f"\n{why}" if why else ""))
        gpus = backends.gpu_count() if check_gpus else 0
        if self.gpu.count() != gpus:
            self.gpu.clear()
            self.gpu.addItems([str(i) for i in range(gpus)])
            if self.model.backend.is_gpu:
                self.gpu.setCurrentIndex(self.model.backend.device)
        self.gpu.setVisible(gpus > 1)
        self.gpu_label.setVisible(gpus > 1)
        self.backends_checked = check_gpus

    def _launch_group(self) -> QGroupBox:
        box = QGroupBox("Launch (threads per block)")
        form = QFormLayout(box)
        self.bx, self.by = SliderSpin(1, 1024), SliderSpin(1, 1024)
        self.bx.valueChanged.connect(lambda v: self.model.set_block(bx=int(v)))
        self.by.valueChanged.connect(lambda v: self.model.set_block(by=int(v)))
        form.addRow("Block width", self.bx)
        form.addRow("Block height", self.by)
        self.threads = QLabel()
        self.threads.setWordWrap(True)  # a long line would widen the whole column
        form.addRow(self.threads)
        self.launch_form = form
        return box

    def _spheres_group(self) -> QGroupBox:
        box = QGroupBox("Spheres")
        form = QFormLayout(box)
        self.count = SphereCountControl()
        self.count.setRange(1, self.model.max_spheres)
        self.count.valueChanged.connect(lambda v: self.model.set_sphere_count(int(v)))
        form.addRow("Spheres", self.count)
        row = QHBoxLayout()
        self.mem_global, self.mem_constant = QRadioButton("Global"), QRadioButton("Constant")
        self.mem_shared, self.mem_binned = QRadioButton("Shared tiles"), QRadioButton("Binned tiles")
        self.memory_buttons = {"global": self.mem_global, "constant": self.mem_constant, "shared": self.mem_shared,
                               "binned": self.mem_binned}
        self.memory = QButtonGroup(self)
        grid = QGridLayout()
        for i, b in enumerate(self.memory_buttons.values()):
            self.memory.addButton(b, i)
            grid.addWidget(b, i // 2, i % 2)
        self.memory.idClicked.connect(lambda i: self.model.set_memory(list(self.memory_buttons)[i]))
        form.addRow("Memory", grid)
        self.pattern = _combo(PATTERNS, "uniform: every thread reads the same sphere at once (constant memory "
                                        "broadcasts it); staggered: the threads of a warp read different spheres")
        self.pattern.textActivated.connect(self.model.set_pattern)
        form.addRow("Access", self.pattern)
        row = QHBoxLayout()
        self.seed = QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        self.seed.setToolTip("seed of the random scene")
        self.seed.valueChanged.connect(lambda v: self.model.new_random_scene(v))
        new = QPushButton("New random scene")
        new.clicked.connect(lambda: self.model.new_random_scene())
        row.addWidget(self.seed)
        row.addWidget(new)
        form.addRow("Seed", row)
        self.presets = _combo([CUSTOM] + list(presets()), "scenes shipped in assets/scenes; (custom): a random "
                              "scene or another file")
        self.presets.textActivated.connect(self._preset_chosen)
        form.addRow("Preset", self.presets)
        row = QHBoxLayout()
        for text, slot in (("Open scene…", self.open_scene), ("Save scene…", self.save_scene)):
            b = QPushButton(text)
            b.clicked.connect(lambda _=False, s=slot: s())
            row.addWidget(b)
        form.addRow(row)
        self.compare_repeats = QSpinBox()
        self.compare_repeats.setRange(1, 1000)
        self.compare_repeats.setValue(3 if backends.simulator_active() else 10)  # the simulator is slow
        self.compare_repeats.setToolTip("renders per memory kind in Compare memory")
        self.compare = QPushButton("Compare memory")
        self.compare.clicked.connect(self.compareRequested)
        row = QHBoxLayout()
        row.addWidget(self.compare_repeats)
        row.addWidget(self.compare)
        form.addRow("Repeats", row)
        self.scene_label = QLabel()
        self.scene_label.setWordWrap(True)
        self.scene_label.setTextFormat(Qt.TextFormat.PlainText)  # a scene's name is data, never markup
        form.addRow(self.scene_label)
        return box

    def _julia_group(self) -> QGroupBox:
        box = QGroupBox("Julia set")
        form = QFormLayout(box)
        self.c_re, self.c_im = SliderSpin(-2, 2, 1000, 6), SliderSpin(-2, 2, 1000, 6)
        for c_box in (self.c_re, self.c_im):
            c_box.setToolTip("type a value (up to 6 decimals) and press Enter, or drag the slider")
        self.c_re.valueChanged.connect(lambda v: self.model.set_julia(c=complex(v, self.model.julia.c.imag)))
        self.c_im.valueChanged.connect(lambda v: self.model.set_julia(c=complex(self.model.julia.c.real, v)))
        form.addRow("c real", self.c_re)
        form.addRow("c imaginary", self.c_im)
        self.iterations = QSpinBox()
        self.iterations.setRange(1, MAX_ITERATIONS)
        self.iterations.valueChanged.connect(lambda v: self.model.set_julia(iterations=v))
        form.addRow("Iterations", self.iterations)
        self.colormap = _combo(COLORMAPS, "classic: the book's red on black; smooth: escape-time palette")
        self.colormap.textActivated.connect(lambda t: self.model.set_julia(colormap=t))
        form.addRow("Colormap", self.colormap)
        self.julia_presets = _combo([CUSTOM] + list(JULIA_PRESETS), "named views; the book's comes first; "
                                    "(custom) once c, iterations or colormap differ from every preset")
        self.julia_presets.textActivated.connect(
            lambda t: self.model.apply_julia_preset(t) if t in JULIA_PRESETS else self._sync(JULIA))
        form.addRow("Preset", self.julia_presets)
        self.book_launch = QCheckBox("Book's launch: one thread per block")
        self.book_launch.toggled.connect(lambda on: self.model.set_launch("book" if on else "2d"))
        form.addRow(self.book_launch)
        self.precision = _combo(PRECISION_MODES, PRECISION_TIP)
        self.precision.textActivated.connect(self.model.set_precision_mode)
        form.addRow("Precision", self.precision)
        row = QHBoxLayout()
        reset = QPushButton("Reset view")
        reset.clicked.connect(self.model.reset_julia_view)
        self.copy_view = QPushButton("Copy view")
        self.copy_view.setToolTip("put this view on the clipboard as a `raytracer-app render julia` command line")
        self.copy_view.clicked.connect(self.copy_julia_view)
        row.addWidget(reset)
        row.addWidget(self.copy_view)
        form.addRow(row)
        self.view_label = QLabel()
        self.view_label.setWordWrap(True)
        self.view_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow(self.view_label)
        return box

    # ------------------------------------------------------------------ user actions
    def copy_julia_view(self) -> str:
        """The current Julia view as a `render julia` command line, on the clipboard; returns it."""
        w, h = self.model.effective_size(JULIA)
        text = self.model.julia.command_line(w, h)
        QApplication.clipboard().setText(text)
        self.model.message.emit("copied: " + text)
        return text

    def _backend_chosen(self, name: str) -> None:
        device = self.gpu.currentIndex() if backends.choice(name).is_gpu and self.gpu.count() > 1 else None
        if not self.model.set_backend(name, device):
            self._sync("backend")

    def _size_chosen(self, text: str) -> None:
        try:
            self.model.set_size(parse_size(text))
        except InputError as exc:
            self.model.message.emit(str(exc))
            self._sync("size")

    def _preset_chosen(self, name: str) -> None:
        path = presets().get(name)
        if not path or not self.open_scene(path):
            self._sync(SPHERES)  # (custom) or a failed load: show what is in use

    def open_scene(self, path=None) -> bool:
        if path is None:
            path = ask_path(self, "Open scene", "Scene JSON (*.json)", save=False)
            if not path:
                return False
        try:  # read off the GUI thread, and bounded: a file larger than the largest scene is refused from its size
            cap = self.model.max_spheres
            self.model.set_scene(in_background(lambda: load_scene(path, cap, "Open Scene")), str(path))
        except Exception as exc:  # noqa: BLE001 - InputError for any malformed file; anything else still one line
            self.model.message.emit(message_of(exc))
            return False
        return True

    def save_scene(self, path=None) -> bool:
        if path is None:
            path = ask_path(self, "Save scene", "Scene JSON (*.json)", "scene.json")
            if not path:
                return False
        try:
            scene = self.model.scene
            in_background(lambda: save_scene(scene, path, "Save Scene"))
        except Exception as exc:  # noqa: BLE001 - InputError for a refused path, WriteFailed for a failed write
            self.model.message.emit(message_of(exc))
            return False
        self.model.message.emit(f"scene saved to {path}")
        return True

    def launch_text(self) -> str:
        """The launch that applies to what is shown: the block shape, the book's 1x1, or none on the CPU."""
        m = self.model
        if m.backend.is_host:
            return "no thread blocks on the CPU backend: image rows run in parallel"
        if m.block_fixed():
            bx, by = KINDS[m.tab].launch_block(m.params[m.tab], m.block)
            return f"{bx} x {by} = {bx * by} thread{'s' if bx * by > 1 else ''} per block: fixed by the launch chosen"
        bx, by = m.block
        return f"{bx} x {by} = {bx * by} threads (max {m.limits.max_threads_per_block})"

    # ------------------------------------------------------------------ model -> widgets
    def _sync(self, group: str = "") -> None:
        m = self.model
        for w in self._inputs:
            w.blockSignals(True)
        try:
            cpu = m.backend.is_host
            self.backend.setCurrentText(m.backend_name)
            if m.backend.is_gpu and self.gpu.count():
                self.gpu.setCurrentIndex(m.backend.device)
            self.device.setText(m.backend.label + (f"\n{m.backend.note}" if m.backend.note else ""))
            w, h = m.sizes[m.tab]
            self.size.setCurrentText(f"{w}x{h}")
            ew, eh = m.effective_size()
            self.size_note.setText(f"the simulator renders at most {SIM_MAX_SIDE}x{SIM_MAX_SIDE}: {ew}x{eh}"
                                   if (ew, eh) != (w, h) else "")
            self.size_note.setVisible((ew, eh) != (w, h))
            max_bx, max_by = m.max_block()
            self.bx.setRange(1, max_bx)
            self.by.setRange(1, max_by)
            self.bx.setValue(m.block[0])
            self.by.setValue(m.block[1])
            book = m.block_fixed()
            gpu_way = SIM_WAY if cpu and not m.backend.is_simulator else ""
            self.sim_link.setVisible(cpu and not m.backend.is_simulator)
            for s in (self.bx, self.by):
                s.setEnabled(not cpu and not book)
                self.launch_form.labelForField(s).setEnabled(not cpu and not book)  # the row looks disabled too
                s.setToolTip(CPU_BLOCK_TIP + gpu_way if cpu else ("the launch chosen fixes the block" if book else
                             f"BX x BY is at most {m.limits.max_threads_per_block} threads on this device"))
            self.threads.setText(self.launch_text())
            self.threads.setEnabled(not cpu)
            self.count.setRange(1, m.max_spheres)
            sim = m.backend.is_simulator
            self.count.set_limit(m.limit_reason_for(m.memory))
            self.compare_repeats.setMaximum(SIM_MAX_REPEATS if sim else 1000)
            self.count.setValue(m.scene.count)
            self.memory_buttons.get(m.memory, self.mem_global).setChecked(True)
            for name, b in self.memory_buttons.items():
                b.setEnabled(not cpu)
                b.setToolTip(CPU_MEMORY_TIP + gpu_way if cpu else f"{MEMORY_TIPS[name]}\n{m.limit_reason_for(name)}")
            self.compare.setEnabled(not cpu)
            self.compare.setToolTip(CPU_MEMORY_TIP + gpu_way if cpu else "render the scene with global and with constant "
                                    "memory and chart the timings")
            self.pattern.setCurrentText(m.pattern)
            self.seed.setValue(m.seed)
            count = f"{m.scene.count} spheres"
            self.scene_label.setText(f"scene: {m.scene.name}" + ("" if count in m.scene.name else f" ({count})")
                                     + (f"\nfile: {m.scene_path}" if m.scene_path else ""))
            self.presets.setCurrentText(m.scene_preset() or CUSTOM)
            self.julia_presets.setCurrentText(m.julia_preset() or CUSTOM)
            j = m.julia
            self.c_re.setValue(j.c.real)
            self.c_im.setValue(j.c.imag)
            self.iterations.setValue(j.iterations)
            self.colormap.setCurrentText(j.colormap)
            self.book_launch.setChecked(m.launch == "book")
            self.book_launch.setEnabled(not cpu)
            self.book_launch.setToolTip("the CPU backend has no thread blocks" + gpu_way if cpu else
                                        "<<<dim3(W, H), 1>>>: one thread per block, as in CUDA by Example")
            self.precision.setCurrentText(m.precision_mode)
            self.precision.setToolTip(PRECISION_TIP + f"\nnow drawing in {j.precision}")
            note = m.precision_note()
            self.view_label.setText(j.view_text() + (f"\n{note}" if note else ""))
            self.spheres_box.setVisible(m.tab == SPHERES)
            self.julia_box.setVisible(m.tab == JULIA)
        finally:
            for w in self._inputs:
                w.blockSignals(False)
