# SPDX-License-Identifier: BSD-3-Clause
"""libxfer for Python: couple MPI components step by step, with numpy arrays.

A component joins the workflow described by a YAML file, opens its channels and moves numbered
steps of named, typed n-d datasets through them::

    import numpy as np
    import xfer

    with xfer.init("workflow.yaml") as wf:          # initialises MPI when it is not yet
        ch = wf.channel("fields")
        for step in ch:                             # until the sender ends the stream
            v = step.get("V")                       # this rank's selection, a new array
            t = step.attrs["time"]
            ...

and on the sending side::

        with ch.step() as s:                        # waits for a free slot (flow control)
            s.put("V", block, start=(row0, 0))      # this rank's block of the global array
            s.attrs["time"] = t

A dataset whose shape changes between steps (`dims: [variable, ...]`) is put with the step's
global shape as well: ``s.put("V", block, start=(row0, 0), shape=(rows, cols))``.

Errors are exceptions carrying libxfer's status and message (XferError and its subclasses).
The inter-group collectives (allgather_inter, allgatherv_inter) work on numpy buffers and
accept an mpi4py communicator, an xfer.Comm or a Fortran handle. See docs/bindings.md.
"""
from __future__ import annotations

import atexit
import enum
import math
import os
import sys
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from typing import Any, NamedTuple, Optional, Union

import numpy as np

from ._build import LIBXFER_VERSION, MPI_FLAVOR

__version__ = LIBXFER_VERSION


def _mpi4py_flavor(lib: str) -> Optional[str]:
    if "Open MPI" in lib:
        return "openmpi"
    if "MPICH" in lib:
        return "mpich"
    return None


def _check_mpi4py() -> None:
    """Two MPI libraries in one process crash it: refuse before loading ours."""
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is None:
        return
    theirs = _mpi4py_flavor(mpi.Get_library_version())
    if theirs is not None and theirs != MPI_FLAVOR:
        raise ImportError(
            f"xfer: this build of xfer uses {MPI_FLAVOR}, but mpi4py is loaded with {theirs}: "
            f"one process cannot hold both; use the xfer built for {theirs} "
            f"(PYTHONPATH=build/{theirs}/python)")


_check_mpi4py()

# Open MPI loads its components with dlopen and expects libmpi's symbols to be global.
if MPI_FLAVOR == "openmpi" and hasattr(sys, "setdlopenflags"):
    _flags = sys.getdlopenflags()
    sys.setdlopenflags(_flags | os.RTLD_GLOBAL)
    try:
        from . import _core
    finally:
        sys.setdlopenflags(_flags)
else:
    from . import _core

from ._core import (ConfigError, EndOfStream, FileSystemError, InterruptedWaitError,  # noqa: E402
                    InvalidArgumentError, MismatchError, MPIError, NotFoundError, PeerFailedError,
                    PeerTimeoutError, SpillFullError, StateError, TooLargeError, XferError)

__all__ = [
    "init", "Workflow", "Channel", "Step", "StepStatus", "Dataset", "Shape", "Attributes", "Comm",
    "intercomm_create", "allgather_inter", "allgatherv_inter", "algorithms", "decompose",
    "load_config", "mpi_initialized", "XferError", "InvalidArgumentError", "NotFoundError",
    "MismatchError", "PeerTimeoutError", "PeerFailedError", "StateError", "ConfigError",
    "MPIError", "TooLargeError", "FileSystemError", "SpillFullError", "EndOfStream", "NotReady",
    "InterruptedWaitError", "STATUS",
    "LIBXFER_VERSION", "MPI_FLAVOR",
]

#: libxfer's status codes by symbolic name ("XFER_SUCCESS": 0, "XFER_ERR_TIMEOUT": -8, ...).
STATUS: dict[str, int] = dict(_core.STATUS)


class NotReady(XferError, TimeoutError):
    """No step began within the timeout given to Channel.step or Channel.steps; nothing
    changed, and the same call may be made again. A status, not a libxfer error: its status
    attribute is None."""

    status = None
    name = "XFER_STEP_NOT_READY"


def _error(cls: type, message: str) -> XferError:
    """An exception of class `cls` raised by this package, with its message attribute."""
    e = cls(message)
    e.message = message
    return e


class StepStatus(enum.IntEnum):
    """What Channel.begin_step found: a status, not an error."""
    OK = _core.STEP_OK
    NOT_READY = _core.STEP_NOT_READY
    END_OF_STREAM = _core.STEP_END_OF_STREAM


# ---- MPI ---------------------------------------------------------------------------------

_THREAD_LEVELS = {"single": _core.THREAD_SINGLE, "funneled": _core.THREAD_FUNNELED,
                  "serialized": _core.THREAD_SERIALIZED, "multiple": _core.THREAD_MULTIPLE}
_mpi_mine = False  # MPI was initialised by this package: finalize it at exit
_open: list["Workflow"] = []  # workflows not finalized yet: finalized at exit
_failed = False  # the interpreter is exiting on an unhandled exception


def mpi_initialized() -> bool:
    """True while MPI is initialised and not finalised."""
    init, fin, _ = _core.mpi_state()
    return bool(init and not fin)


def _ensure_mpi(thread_level: str = "multiple") -> None:
    global _mpi_mine
    if thread_level not in _THREAD_LEVELS:
        raise _error(InvalidArgumentError,
                     f"thread_level {thread_level!r}: expected one of {', '.join(_THREAD_LEVELS)}")
    _, mine = _core.mpi_init(_THREAD_LEVELS[thread_level])
    _mpi_mine = _mpi_mine or bool(mine)


def _excepthook(etype, value, tb):  # pragma: no cover - runs at exit
    global _failed
    _failed = True
    _previous_excepthook(etype, value, tb)


def _at_exit() -> None:  # pragma: no cover - runs at exit
    init, fin, _ = _core.mpi_state()
    if not init or fin:
        return
    if _failed and (_open or _mpi_mine):
        # The other ranks would wait for this one for ever (collective finalize): end the job,
        # as `python -m mpi4py` does.
        sys.stderr.flush()
        _core.mpi_abort(1)
    for wf in list(_open):
        try:
            wf.finalize()
        except XferError as e:
            print(f"xfer: finalizing the workflow at exit: {e}", file=sys.stderr)
    if _mpi_mine:
        _core.mpi_finalize()


_previous_excepthook = sys.excepthook
sys.excepthook = _excepthook
atexit.register(_at_exit)


# ---- communicators -------------------------------------------------------------------------

CommLike = Union["Comm", int, Any]  # xfer.Comm, an mpi4py communicator or a Fortran handle


class Comm:
    """An MPI communicator, held as its Fortran handle (what MPI_Comm_c2f gives): usable
    without mpi4py, and convertible to and from mpi4py's communicators."""

    __slots__ = ("_handle",)

    def __init__(self, handle: CommLike) -> None:
        if isinstance(handle, Comm):
            handle = handle.py2f()
        elif not isinstance(handle, int):
            if not hasattr(handle, "py2f"):
                raise TypeError(f"expected a communicator, got {type(handle).__name__}")
            _check_mpi4py_comm(handle)
            handle = handle.py2f()
        self._handle = int(handle)

    @classmethod
    def world(cls) -> "Comm":
        """MPI_COMM_WORLD (MPI is initialised first when it is not)."""
        _ensure_mpi()
        return cls(_core.comm_world())

    @classmethod
    def from_mpi4py(cls, comm: Any) -> "Comm":
        return cls(comm)

    def py2f(self) -> int:
        """The Fortran handle (an int), as mpi4py's Comm.py2f."""
        return self._handle

    def to_mpi4py(self) -> Any:
        """This communicator as an mpi4py object (Intercomm or Intracomm); needs mpi4py built
        for the same MPI library."""
        from mpi4py import MPI
        _check_mpi4py()
        return (MPI.Intercomm if self.is_inter else MPI.Intracomm).f2py(self._handle)

    @property
    def rank(self) -> int:
        return _core.comm_info(self)[0]

    @property
    def size(self) -> int:
        return _core.comm_info(self)[1]

    @property
    def is_inter(self) -> bool:
        return bool(_core.comm_info(self)[2])

    @property
    def remote_size(self) -> int:
        """Size of the remote group of an intercommunicator (0 otherwise)."""
        return _core.comm_info(self)[3]

    def split(self, color: int, key: int = 0) -> Optional["Comm"]:
        """MPI_Comm_split (collective); a negative color gives None (MPI_UNDEFINED)."""
        h = _core.comm_split(self, color, key)
        return None if h is None else Comm(h)

    def dup(self) -> "Comm":
        return Comm(_core.comm_dup(self))

    def free(self) -> None:
        _core.comm_free(self)

    def barrier(self) -> None:
        _core.barrier(self)

    def allreduce(self, values: Any, op: str = "sum") -> np.ndarray:
        """MPI_Allreduce of a numeric array (float64, float32, int64, uint64, int32, uint32)
        with op 'sum', 'min' or 'max' (collective): a new array of the same shape."""
        return _core.allreduce(values, op, self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Comm) and other._handle == self._handle

    def __hash__(self) -> int:
        return hash(self._handle)

    def __repr__(self) -> str:
        return f"xfer.Comm({self._handle})"


def _check_mpi4py_comm(comm: Any) -> None:
    if type(comm).__module__.startswith("mpi4py"):
        _check_mpi4py()


def intercomm_create(local: CommLike, local_leader: int, peer: CommLike, remote_leader: int,
                     tag: int = 0) -> Comm:
    """MPI_Intercomm_create: join the local group (its leader `local_leader`) with the group
    whose leader is rank `remote_leader` of `peer` (collective over both groups)."""
    return Comm(_core.intercomm_create(Comm(local), local_leader, Comm(peer), remote_leader, tag))


# ---- the workflow --------------------------------------------------------------------------


class Dataset(NamedTuple):
    """A dataset of a channel: its name, element type (a numpy dtype: a record's is the
    structured dtype np.dtype([...], align=True) of its fields), global shape (C order, slowest
    dimension first; None where each step gives the extent: a joined dataset's rows, a
    `variable` entry), whether this component sends it, whether it is joined (`dims: [joined,
    ...]`) and whether its shape is variable (some `dims` entry is `variable`: each step's puts
    give it, with shape=)."""
    name: str
    dtype: np.dtype
    shape: tuple[Optional[int], ...]
    sent: bool
    joined: bool = False
    variable: bool = False


class Shape(NamedTuple):
    """A received dataset in the current step (Channel.get_shape): the step's global dims (a
    joined dataset's rows, all sending ranks' together, in dims[0]), this rank's selection of
    it (start, count: what get returns) and the step."""
    dims: tuple[int, ...]
    start: tuple[int, ...]
    count: tuple[int, ...]
    step: int


def _timeout_ms(timeout: Optional[float]) -> int:
    """Seconds (None or negative: as long as the peer lives, 0: poll) to libxfer's ms."""
    if timeout is None or timeout < 0:
        return -1
    if timeout == 0:
        return 0
    return max(1, min(2**31 - 1, math.ceil(timeout * 1000)))


def init(config: Union[str, os.PathLike, None] = None, component: Optional[str] = None,
         comm: Optional[CommLike] = None, *, thread_level: str = "multiple") -> "Workflow":
    """Join the workflow of file `config` (None: XFER_CONFIG) as `component` (None:
    XFER_COMPONENT, else the MPMD application number). MPI is initialised first when the
    program has not (with `thread_level`, MPI_THREAD_MULTIPLE by default, which lets libxfer's
    progress thread move steps while Python computes) and finalised at exit. `comm` holds every
    process of this launch (default MPI_COMM_WORLD). Collective."""
    _ensure_mpi(thread_level)
    return Workflow(config, component, comm)


class Workflow(_core.Workflow):
    """One component's membership of a workflow (xfer_init). Use it as a context manager, or
    call finalize(); a workflow still open at exit is finalized then (or, when the program
    dies of an unhandled exception, MPI is aborted so that no peer waits for it)."""

    def __init__(self, config: Union[str, os.PathLike, None] = None,
                 component: Optional[str] = None, comm: Optional[CommLike] = None) -> None:
        _ensure_mpi()
        super().__init__(None if config is None else os.fspath(config), component,
                         None if comm is None else Comm(comm))
        self._channels: dict[str, Channel] = {}
        _open.append(self)

    def channel(self, name: str) -> "Channel":
        """The channel `name` (formed by init)."""
        ch = self._channels.get(name)
        if ch is None:
            ch = Channel(self, name)
            self._channels[name] = ch
        return ch

    @property
    def channels(self) -> list[str]:
        """Names of the channels of this component."""
        me = self.component
        return [c["name"] for c in self.config["channels"] if me in (c["from"], c["to"])]

    @property
    def comm(self) -> Comm:  # type: ignore[override]
        """The component's own communicator (its ranks only)."""
        return Comm(super().comm)

    def finalize(self) -> None:
        """Leave the workflow (collective over the component's ranks): committed steps are
        delivered, peers told that no step comes any more. Idempotent."""
        try:
            super().finalize()
        finally:
            if self in _open:
                _open.remove(self)

    def __enter__(self) -> "Workflow":
        return self

    def __exit__(self, etype, value, tb) -> None:
        # On an exception only this rank may be here: a collective finalize could hang, so
        # the workflow is left to the exit handler (which aborts MPI on an unhandled error).
        if etype is None:
            self.finalize()

    def __repr__(self) -> str:
        if self.finalized:
            return "<xfer.Workflow (finalized)>"
        return f"<xfer.Workflow {self.config['workflow']!r} component {self.component!r}>"


class Channel(_core.Channel):
    """A channel of the workflow: numbered steps of its datasets.

    Sending side: ``with ch.step() as s: s.put(name, block, start=...)``. Receiving side:
    ``for s in ch: s.get(name)``, which ends quietly at the end of the stream. Full duplex:
    both, in the same step. The lower-level calls (begin_step, put, get, end_step) are
    methods of the channel too.

    close() finishes the channel early while the workflow's other channels go on (a reader
    leaves cleanly, a sender ends its stream); so does leaving ``with wf.channel(name) as ch:``
    without an exception. Both are collective over the component's ranks."""

    def begin_step(self, timeout: Optional[float] = None) -> StepStatus:  # type: ignore[override]
        """Begin the current step, waiting at most `timeout` seconds (None: as long as the peer
        lives; 0: poll). OK, NOT_READY (nothing changed: call again) or END_OF_STREAM."""
        return StepStatus(super().begin_step(_timeout_ms(timeout)))

    def step(self, timeout: Optional[float] = None) -> "Step":
        """Begin the current step and return it; use it as a context manager, which ends the
        step on leaving (not when its body raised: the step stays current). Raises NotReady
        when `timeout` passed first and EndOfStream once the stream ended."""
        st = self.begin_step(timeout)
        if st == StepStatus.END_OF_STREAM:
            raise _error(EndOfStream, f"channel {self.name}: the stream ended")
        if st == StepStatus.NOT_READY:
            raise _error(NotReady, f"channel {self.name}: step {self.step_index} did not "
                                   f"begin within {timeout} s")
        return Step(self)

    def steps(self, timeout: Optional[float] = None) -> Iterator["Step"]:
        """The steps of the stream, each begun before it is given and ended when the loop
        asks for the next; the iteration ends at the end of the stream. A step that does not
        begin within `timeout` raises NotReady. Leaving the loop early (break) leaves the
        current step begun and the channel open: a later loop goes on from that step. To leave
        the channel, close() it, or leave the loop inside ``with wf.channel(name) as ch:``
        (collective: every rank of the component leaves at the same step). A break does not
        close it by itself: it cannot be told from an exception that unwinds the loop on one
        rank only, where a collective close would wait for the others for ever."""
        while True:
            st = self.begin_step(timeout)
            if st == StepStatus.END_OF_STREAM:
                return
            if st == StepStatus.NOT_READY:
                raise _error(NotReady, f"channel {self.name}: step {self.step_index} did not "
                                       f"begin within {timeout} s")
            s = Step(self)
            yield s
            if not s.ended:
                s.end()

    def __iter__(self) -> Iterator["Step"]:
        return self.steps()

    def __enter__(self) -> "Channel":
        return self

    def __exit__(self, etype, value, tb) -> None:
        # On an exception only this rank may be here: a collective close could hang (as
        # Workflow.__exit__ leaves its finalize to the exit handler).
        if etype is None:
            self.close()

    def get_shape(self, name: str) -> Shape:  # type: ignore[override]
        """Dataset `name` in the current step, waiting for the step as get does: the step's dims
        (a joined dataset's rows in dims[0]), this rank's start and count, the step."""
        dims, start, count, step = super().get_shape(name)
        return Shape(dims, start, count, step)

    @property
    def datasets(self) -> dict[str, Dataset]:
        """The channel's datasets by name."""
        cfg = {d["name"]: d for c in self.workflow.config["channels"] if c["name"] == self.name
               for d in c["datasets"]}
        return {n: Dataset(n, self.dtype_of(n), tuple(x if x else None for x in d), bool(s),
                           bool(cfg[n]["joined"]), any(cfg[n]["variable"]))
                for n, (t, d, s) in self.dataset_info.items()}

    @property
    def attrs(self) -> "Attributes":
        """The current step's attributes (receiving side: read; sending side: write)."""
        return Attributes(self)

    def __repr__(self) -> str:
        if self.closed:
            return f"<xfer.Channel {self.name!r} (closed)>"
        return f"<xfer.Channel {self.name!r} ({self.role}), step {self.step_index}>"


class Step:
    """The current step of a channel: put, get and attributes for it, then end()."""

    __slots__ = ("channel", "index", "ended")

    def __init__(self, channel: Channel) -> None:
        self.channel = channel
        self.index: int = channel.step_index
        self.ended = False

    def put(self, name: str, data: Any, start: Optional[Sequence[int]] = None,
            shape: Optional[Sequence[int]] = None) -> None:
        """Stage this rank's block of dataset `name`: an array of the dataset's dtype (other
        values are converted when numpy's same_kind casting allows), of the block's shape,
        whose first element is at `start` of the global array (None: the block is the whole
        dataset). A dataset of variable shape (`dims: [variable, ...]`) takes the step's global
        shape too, `shape` (every sending rank gives the same; None with no start: the block's
        own, the block is the whole step). A joined dataset takes this rank's rows instead,
        shape (rows, *row shape), any number of rows (0 included), no start and no shape. A
        record dataset takes a structured array of its dtype (Channel.dtype_of). Copied unless
        the dataset is bound (Channel.bind)."""
        self.channel.put(name, data, start, shape)

    def get(self, name: str, out: Optional[np.ndarray] = None,
            start: Optional[Sequence[int]] = None,
            count: Optional[Sequence[int]] = None) -> np.ndarray:
        """This rank's selection of dataset `name` (or the box start/count inside it): into
        `out` when given (its dtype and shape must match this step's selection; written in
        place), else a new array (or the bound array, without a copy). A joined dataset's
        selection is the step's: (rows of this rank's share, *row shape)."""
        return self.channel.get(name, out, start, count)

    def get_shape(self, name: str) -> Shape:
        """The step's dims of dataset `name` and this rank's selection (Channel.get_shape)."""
        return self.channel.get_shape(name)

    def get_rows(self, name: str) -> np.ndarray:
        """Each sending rank's rows of joined dataset `name` in this step (uint64); sending
        rank r's rows start at the sum of the rows before it."""
        return self.channel.get_rows(name)

    @property
    def attrs(self) -> "Attributes":
        return Attributes(self.channel)

    def end(self) -> None:
        """Commit (sending side) or release (receiving side) the step."""
        self.channel.end_step()
        self.ended = True

    def __enter__(self) -> "Step":
        return self

    def __exit__(self, etype, value, tb) -> None:
        if etype is None and not self.ended:
            self.end()

    def __repr__(self) -> str:
        return f"<xfer.Step {self.index} of channel {self.channel.name!r}>"


class Attributes(MutableMapping):
    """A step's attributes: str, numbers and small 1-D arrays, carried in-band with the step
    from the sending side's rank 0. Set them on the sending side before the step ends; read
    them on the receiving side (a single value comes back as a Python number)."""

    __slots__ = ("_ch",)

    def __init__(self, channel: Channel) -> None:
        self._ch = channel

    def __getitem__(self, name: str) -> Any:
        try:
            return self._ch.get_attr(name)
        except NotFoundError as e:
            raise KeyError(name) from e

    def __setitem__(self, name: str, value: Any) -> None:
        self._ch.put_attr(name, value)

    def __delitem__(self, name: str) -> None:
        raise TypeError("a step's attributes cannot be deleted (the next step starts with none)")

    def __iter__(self) -> Iterator[str]:
        return iter(self._ch.attr_names())

    def __len__(self) -> int:
        return len(self._ch.attr_names())

    def __contains__(self, name: object) -> bool:
        return name in self._ch.attr_names()

    def __repr__(self) -> str:
        return f"<xfer.Attributes of step {self._ch.step_index} of {self._ch.name!r}>"


# ---- collectives and helpers ----------------------------------------------------------------


def _recv_target(recvbuf: Optional[np.ndarray]) -> tuple[Optional[np.ndarray], bool]:
    if recvbuf is None:
        return None, False
    if not isinstance(recvbuf, np.ndarray):
        raise _error(InvalidArgumentError,
                     f"recvbuf: expected a numpy array, got {type(recvbuf).__name__}")
    if not recvbuf.flags.writeable:
        raise _error(InvalidArgumentError, "recvbuf is not writable")
    if recvbuf.flags.c_contiguous:
        return recvbuf, False
    return np.empty(recvbuf.shape, recvbuf.dtype), True


def allgather_inter(sendbuf: Optional[np.ndarray], recvbuf: Optional[np.ndarray],
                    comm: CommLike, *, algorithm: Optional[str] = None) -> Optional[np.ndarray]:
    """MPI_Allgather on the intercommunicator `comm` (an mpi4py Intercomm, an xfer.Comm or a
    Fortran handle), with libxfer's inter-group algorithms (`algorithm`: a registry name, 'auto'
    or None for XFER_ALGORITHM/auto): every rank receives in `recvbuf` the `sendbuf`s of the
    other group's ranks, in rank order. Half duplex: None (or an empty array) on the side that
    sends or receives nothing. Collective over both groups. Returns `recvbuf`."""
    s = None if sendbuf is None else np.ascontiguousarray(sendbuf)
    r, copy = _recv_target(recvbuf)
    _core.allgather_inter(s, r, Comm(comm), algorithm)
    if copy:
        recvbuf[...] = r
    return recvbuf


def allgatherv_inter(sendbuf: Optional[np.ndarray], recvbuf: Optional[np.ndarray],
                     counts: Sequence[int], comm: CommLike, *,
                     displs: Optional[Sequence[int]] = None,
                     algorithm: Optional[str] = None) -> Optional[np.ndarray]:
    """MPI_Allgatherv on the intercommunicator `comm`: `counts[i]` elements of `recvbuf` come
    from rank i of the other group, at `displs[i]` (None: packed in rank order). Collective
    over both groups. Returns `recvbuf`."""
    s = None if sendbuf is None else np.ascontiguousarray(sendbuf)
    r, copy = _recv_target(recvbuf)
    _core.allgatherv_inter(s, r, list(counts), None if displs is None else list(displs),
                           Comm(comm), algorithm)
    if copy:
        recvbuf[...] = r
    return recvbuf


def algorithms() -> list[dict[str, Any]]:
    """The algorithm registry: name, summary, restrictions and flags of each."""
    return _core.algorithms()


def decompose(mode: str, dims: Sequence[int], nranks: int,
              rank: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(start, count) of the box rank `rank` of `nranks` holds of an array of shape `dims`
    under `mode` ('all', 'rows', 'columns' or 'block'): the channel's selection modes, and a
    decomposition for producers' blocks."""
    return _core.decompose(mode, list(dims), nranks, rank)


def load_config(path: Union[str, os.PathLike]) -> dict[str, Any]:
    """The validated workflow file as a dict (no MPI needed); ConfigError names the line."""
    return _core.load_config(os.fspath(path))
