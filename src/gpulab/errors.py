"""The one exception type the command line turns into a one-line message and exit code 2."""


class GpulabError(Exception):
    """A problem the user can fix: the message says what went wrong and what to do."""


class CompileError(GpulabError):
    """NVRTC rejected a kernel; the message carries NVRTC's own log (file and line)."""


class NoGpuError(GpulabError):
    """A command needs an NVIDIA GPU and none is usable."""
