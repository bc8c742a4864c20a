"""The package's version, in a module of its own so records can stamp it without importing the
package's front door (gpulab/__init__.py, which hands out the Python API)."""

__version__ = "0.1.0"
