"""setuptools needs this file only to build the cffi extension (API mode)."""

from setuptools import setup

setup(cffi_modules=["pytest_netload/engine/_build.py:ffibuilder"])
