"""What each warp does to memory, as the hardware counts it: warp requests rebuilt from a traced simulator
run, tallied per source line and per kernel under Nsight Compute's metric names (pure Python: no numba).

A request is one warp executing one access instruction once: its 32 lanes' byte addresses (None for a lane
that did not take part) and the access width. Global requests touch 32-byte sectors; shared requests are
served in wavefronts over 32 banks of 4 bytes, lanes reading the same 4-byte word share it (a broadcast),
8-byte lanes are served a half-warp at a time and 16-byte lanes a quarter-warp at a time, so the fewest
wavefronts of a request is its number of groups with an active lane; anything above that is a bank
conflict. Constant-memory reads go through the constant cache, which serves one address per pass."""

from __future__ import annotations

from dataclasses import dataclass, field

WARP = 32
SECTOR_BYTES = 32
BANKS = 32
BANK_BYTES = 4

GLOBAL, SHARED, CONST = "global", "shared", "const"
LD, ST, ATOM, RED = "ld", "st", "atom", "red"
SPACE_OPS = {GLOBAL: (LD, ST, ATOM, RED), SHARED: (LD, ST, ATOM), CONST: (LD,)}


def requests_metric(space: str, op: str) -> str:
    """Nsight Compute's name for the requests of a space and operation (shared: instructions executed)."""
    if space == SHARED:
        return f"smsp__inst_executed_op_shared_{op}.sum"
    if space == GLOBAL:
        return f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum"
    return "const_requests"  # not an ncu metric: constant loads are not LSU requests


def sectors_metric(op: str) -> str:
    return f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum"


def wavefronts_metric(op: str) -> str:
    return f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"


def conflicts_metric(op: str) -> str:
    return f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"


def lanes_key(space: str, op: str) -> str:
    """Not an ncu metric: the active lanes summed over the requests (lanes per request = this / requests)."""
    return f"lanes_{space}_{op}"


CONST_ADDRESSES = "const_addresses"  # not an ncu metric: distinct addresses summed over constant requests


def hardware_metrics() -> list[str]:
    """Every Nsight Compute metric a trace predicts (what ``--measured`` asks ncu for)."""
    names = []
    for op in SPACE_OPS[GLOBAL]:
        names += [requests_metric(GLOBAL, op), sectors_metric(op)]
    for op in SPACE_OPS[SHARED]:
        names += [requests_metric(SHARED, op), wavefronts_metric(op), conflicts_metric(op)]
    return names


# --- one request ---------------------------------------------------------------------------------------------


def lane_sectors(address: int, width: int) -> range:
    """The 32-byte sectors one lane's bytes [address, address + width) fall in."""
    return range(address // SECTOR_BYTES, (address + width - 1) // SECTOR_BYTES + 1)


def sectors(lanes, width: int) -> set[int]:
    """The distinct sectors a global request touches."""
    out: set[int] = set()
    for a in lanes:
        if a is not None:
            out.update(lane_sectors(a, width))
    return out


def lanes_per_wavefront_group(width: int) -> int:
    """How many lanes the shared-memory unit serves together: a whole warp up to 4-byte lanes, a half-warp of
    8-byte lanes, a quarter-warp of 16-byte lanes (128 bytes at a time)."""
    return WARP if width <= BANK_BYTES else max(1, WARP * BANK_BYTES // width)


def bank_slots(lanes, width: int) -> list:
    """Per lane, None (inactive) or (bank of its first word, the wavefront of its group that serves it): in
    each group the distinct words of one bank are served one per wavefront, so slot > 0 is a replay."""
    out: list = [None] * len(lanes)
    group = lanes_per_wavefront_group(width)
    for start in range(0, len(lanes), group):
        order: dict[int, list[int]] = {}  # bank -> its distinct words, in lane order
        for lane in range(start, min(start + group, len(lanes))):
            a = lanes[lane]
            if a is None:
                continue
            first = a // BANK_BYTES
            slot = 0
            for word in range(first, (a + width - 1) // BANK_BYTES + 1):
                words = order.setdefault(word % BANKS, [])
                if word not in words:
                    words.append(word)
                slot = max(slot, words.index(word))
            out[lane] = (first % BANKS, slot)
    return out


def wavefronts(lanes, width: int, op: str = ST) -> tuple[int, int]:
    """(wavefronts, the fewest possible) of a shared request; conflicts are the difference. A store of lanes
    wider than a bank is served a group of lanes at a time (lanes_per_wavefront_group), each group's
    distinct words of one bank one per wavefront. A load (``op`` LD) is counted over the whole warp, as
    Nsight Compute counts it: as many wavefronts as one bank's distinct words, at best one per 32 distinct
    words. On an H100, 8-byte loads whose 16 active lanes lay in both half-warps counted a conflict per
    request, and the stores of the same lanes none (docs/measurements.md, access traces against Nsight
    Compute)."""
    group = WARP if op == LD else lanes_per_wavefront_group(width)
    total = minimum = 0
    for start in range(0, len(lanes), group):
        words_by_bank: dict[int, set[int]] = {}
        for a in lanes[start:start + group]:
            if a is None:
                continue
            for word in range(a // BANK_BYTES, (a + width - 1) // BANK_BYTES + 1):
                words_by_bank.setdefault(word % BANKS, set()).add(word)
        if words_by_bank:
            total += max(len(w) for w in words_by_bank.values())
            minimum += -(-sum(len(w) for w in words_by_bank.values()) // BANKS)
    return total, minimum


@dataclass(frozen=True)
class Request:
    """One warp request as traced: for a view that draws its lanes, sectors or banks."""

    space: str  # GLOBAL, SHARED or CONST
    op: str  # LD, ST, ATOM or RED
    width: int  # bytes per lane
    lanes: tuple  # 32 byte addresses (None: the lane did not take part); each array has its own base
    block: tuple  # (x, y, z) of the block
    warp: int  # warp within the block (threads numbered x fastest, 32 a warp)
    iteration: int  # the n-th time these lanes executed this access (1 = first)
    array: str = ""  # which array, as the trace names it (a base address in hex)

    @property
    def active(self) -> int:
        return sum(a is not None for a in self.lanes)

    def sectors(self) -> list[int]:
        return sorted(sectors(self.lanes, self.width))

    def lane_sectors(self) -> list:
        """Per lane: None, or the sectors its bytes fall in."""
        return [None if a is None else list(lane_sectors(a, self.width)) for a in self.lanes]

    def bank_slots(self) -> list:
        return bank_slots(self.lanes, self.width)

    def wavefronts(self) -> tuple[int, int]:
        return wavefronts(self.lanes, self.width, self.op)

    @property
    def conflicts(self) -> int:
        total, minimum = self.wavefronts()
        return total - minimum

    def as_dict(self) -> dict:
        d = {"space": self.space, "op": self.op, "width": self.width, "block": list(self.block), "warp": self.warp,
             "iteration": self.iteration, "lanes": [None if a is None else hex(a) for a in self.lanes]}
        if self.space == GLOBAL:
            d["sectors"] = len(self.sectors())
        elif self.space == SHARED:
            d["wavefronts"], d["minimum_wavefronts"] = self.wavefronts()
        return d


# --- tallies -------------------------------------------------------------------------------------------------


def add_request(metrics: dict, space: str, op: str, lanes, width: int) -> None:
    """Add one request's counts to ``metrics`` (metric name -> total)."""
    active = sum(a is not None for a in lanes)
    if not active:
        return
    key = requests_metric(space, op)
    metrics[key] = metrics.get(key, 0) + 1
    lk = lanes_key(space, op)
    metrics[lk] = metrics.get(lk, 0) + active
    if space == GLOBAL:
        k = sectors_metric(op)
        metrics[k] = metrics.get(k, 0) + len(sectors(lanes, width))
    elif space == SHARED:
        total, minimum = wavefronts(lanes, width, op)
        for k, v in ((wavefronts_metric(op), total), (conflicts_metric(op), total - minimum)):
            metrics[k] = metrics.get(k, 0) + v
    else:
        metrics[CONST_ADDRESSES] = metrics.get(CONST_ADDRESSES, 0) + len({a for a in lanes if a is not None})


def cost(metrics: dict) -> int:
    """What a line costs the memory system: global sectors, shared wavefronts and constant-cache passes."""
    total = metrics.get(CONST_ADDRESSES, 0)
    for op in SPACE_OPS[GLOBAL]:
        total += metrics.get(sectors_metric(op), 0)
    for op in SPACE_OPS[SHARED]:
        total += metrics.get(wavefronts_metric(op), 0)
    return total


@dataclass(frozen=True)
class Ratio:
    """One access kind's per-request figures (None where it does not apply)."""

    space: str
    op: str
    requests: int
    sectors_per_request: float | None = None
    wavefronts_per_request: float | None = None
    conflicts_per_request: float | None = None
    lanes_per_request: float | None = None
    addresses_per_request: float | None = None

    @property
    def label(self) -> str:
        words = {LD: "loads", ST: "stores", ATOM: "atomics", RED: "reductions (atomics with unused result)"}
        return f"{self.space} {words[self.op]}"


def ratios(metrics: dict) -> list[Ratio]:
    """Per access kind present in ``metrics``: requests and the per-request figures."""
    out = []
    for space, ops in SPACE_OPS.items():
        for op in ops:
            requests = metrics.get(requests_metric(space, op), 0)
            if not requests:
                continue
            per = lambda key, requests=requests: metrics.get(key, 0) / requests  # noqa: E731
            lanes = per(lanes_key(space, op))
            if space == GLOBAL:
                out.append(Ratio(space, op, requests, sectors_per_request=per(sectors_metric(op)),
                                 lanes_per_request=lanes))
            elif space == SHARED:
                out.append(Ratio(space, op, requests, wavefronts_per_request=per(wavefronts_metric(op)),
                                 conflicts_per_request=per(conflicts_metric(op)), lanes_per_request=lanes))
            else:
                out.append(Ratio(space, op, requests, addresses_per_request=per(CONST_ADDRESSES),
                                 lanes_per_request=lanes))
    return out


HEAT_FIGURES = ("sectors_per_request", "wavefronts_per_request", "conflicts_per_request", "lanes_per_request")


def per_request(metrics: dict, figure: str) -> float | None:
    """One figure over every access kind of ``metrics`` (a line's heat, a kernel's summary): global sectors per
    global request, shared wavefronts or conflicts per shared request, active lanes per request of any kind;
    None where the line has no request of that space."""
    if figure == "sectors_per_request":
        ops, space, key = SPACE_OPS[GLOBAL], GLOBAL, sectors_metric
    elif figure in ("wavefronts_per_request", "conflicts_per_request"):
        ops, space = SPACE_OPS[SHARED], SHARED
        key = wavefronts_metric if figure == "wavefronts_per_request" else conflicts_metric
    elif figure == "lanes_per_request":
        pairs = [(space, op) for space, ops in SPACE_OPS.items() for op in ops]
        requests = sum(metrics.get(requests_metric(s, o), 0) for s, o in pairs)
        return sum(metrics.get(lanes_key(s, o), 0) for s, o in pairs) / requests if requests else None
    else:
        raise ValueError(f"figure {figure!r}: one of {', '.join(HEAT_FIGURES)}")
    requests = sum(metrics.get(requests_metric(space, op), 0) for op in ops)
    return sum(metrics.get(key(op), 0) for op in ops) / requests if requests else None


@dataclass
class LineAccess:
    """One source line of a kernel (or of a device or shared function it calls): its counts, notes on what
    the trace cannot see there, and some of its requests (the first few and a spread over the rest)."""

    file: str  # as shown: relative to the project for its own files
    line: int
    source: str
    metrics: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    requests: list = field(default_factory=list)  # Request, in trace order
    requests_seen: int = 0  # requests on this line in the traced blocks (``requests`` keeps a bounded part)

    @property
    def cost(self) -> int:
        return cost(self.metrics)

    def ratios(self) -> list[Ratio]:
        return ratios(self.metrics)

    def per_request(self, figure: str) -> float | None:
        """A heat column's value: one of HEAT_FIGURES over the line's access kinds."""
        return per_request(self.metrics, figure)

    def requests_of(self, space: str | None = None, op: str | None = None, warp: int | None = None) -> list:
        """The kept requests, filtered: e.g. one warp's stepping through a loop's iterations."""
        return [r for r in self.requests if (space is None or r.space == space) and (op is None or r.op == op)
                and (warp is None or r.warp == warp)]


@dataclass
class KernelAccess:
    """One kernel's traced launch: its configuration, the blocks traced, and its lines."""

    name: str
    grid: tuple
    block: tuple
    dynamic_shared: int
    blocks_total: int
    sampled: tuple  # linear block numbers traced (x fastest), ascending
    lines: list = field(default_factory=list)  # LineAccess, by file and line
    launches: int = 1  # launches of this kernel the run made; the first was traced, the rest not run
    notes: list = field(default_factory=list)

    @property
    def all_blocks(self) -> bool:
        return len(self.sampled) == self.blocks_total

    @property
    def scope(self) -> str:
        """What the totals cover, in words."""
        if self.all_blocks:
            return f"all {self.blocks_total} blocks"
        return f"the {len(self.sampled)} traced blocks of {self.blocks_total} only"

    @property
    def totals(self) -> dict:
        out: dict = {}
        for line in self.lines:
            for k, v in line.metrics.items():
                out[k] = out.get(k, 0) + v
        return out

    def ratios(self) -> list[Ratio]:
        return ratios(self.totals)

    def per_request(self, figure: str) -> float | None:
        return per_request(self.totals, figure)

    def line(self, number: int, file: str | None = None) -> LineAccess | None:
        return next((ln for ln in self.lines if ln.line == number and (file is None or ln.file == file)), None)

    def line_containing(self, text: str) -> LineAccess | None:
        """The first line whose source contains ``text`` (spaces ignored), e.g. 'shared[index]+='."""
        want = "".join(text.split())
        return next((ln for ln in self.lines if want in "".join(ln.source.split())), None)

    def costliest(self, count: int = 5) -> list[LineAccess]:
        return sorted((ln for ln in self.lines if ln.cost), key=lambda ln: (-ln.cost, ln.file, ln.line))[:count]


@dataclass
class AccessResult:
    """A traced run: what ran, each kernel's access tallies, and notes that hold for the whole run."""

    target: str
    variant: str
    n: int | None
    options: dict
    launch: dict  # the launch asked for, resolved: block, grid, items
    blocks_asked: int  # the sample size per launch (--blocks)
    kernels: list = field(default_factory=list)  # KernelAccess, in launch order
    notes: list = field(default_factory=list)
    seconds: float = 0.0  # the trace's wall time in the child (numba's import excluded)
    variant_file: str | None = None

    def kernel(self, name: str) -> KernelAccess | None:
        return next((k for k in self.kernels if k.name == name), None)

    @property
    def sampled_blocks(self) -> dict:
        """How blocks were sampled, for the JSON file and the figures' captions."""
        return {"asked": self.blocks_asked,
                "rule": "every block of a grid of at most this many; else the first half of them and the rest "
                        "spread evenly to the last block",
                "totals": "for the traced blocks only; nothing is scaled",
                "per_kernel": {k.name: {"traced": len(k.sampled), "of": k.blocks_total, "blocks": list(k.sampled)}
                               for k in self.kernels}}


def sample_blocks(total: int, asked: int) -> tuple[int, ...]:
    """The blocks a traced launch runs, by linear number (x fastest): every block of a grid of at most
    ``asked``; else the first half of ``asked`` and the rest spread evenly over the others, the last block
    included (a grid's tail is where bounds checks bite). Deterministic."""
    if total <= asked:
        return tuple(range(total))
    first = max(1, asked // 2)
    rest = asked - first
    chosen = set(range(first))
    if rest == 1:
        chosen.add(total - 1)
    elif rest > 1:
        span = total - 1 - first
        chosen.update(first + round(i * span / (rest - 1)) for i in range(rest))
    return tuple(sorted(chosen))
