"""The one exception type the command line turns into a one-line message and its exit code (2)."""


class GpulabError(Exception):
    """A problem the user can fix: the message says what went wrong and what to do."""

    exit_code = 2


class RunsFailed(GpulabError):
    """Some runs of a sweep failed; every finished run was kept. Exit code 1: the input was fine."""

    exit_code = 1


class CompileError(GpulabError):
    """NVRTC rejected a kernel; the message carries NVRTC's own log (file and line)."""


class NoGpuError(GpulabError):
    """A command needs an NVIDIA GPU and none is usable."""


class DeviceFault(GpulabError):
    """A kernel faulted on the device (an illegal or misaligned address, a trap): the CUDA context
    of this process is unusable from here on, so whatever runs next must run in a fresh process.
    `error` is the CUDA error alone (e.g. "cudaErrorIllegalAddress: an illegal memory access was
    encountered"), for a row that records it."""

    def __init__(self, message: str, error: str = ""):
        super().__init__(message)
        self.error = error or message


class NotModelled(GpulabError):
    """A variant's access model declines one config (its counts depend on timing, say): the message
    says which and why. Fidelity reports the run's counters with that reason, as for a variant with
    no model."""
