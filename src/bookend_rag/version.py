"""The package's version (the distribution is ``bookend-rag``; the import name is ``bookend``)."""

__all__ = ["__version__"]

__version__ = "0.1.0"
