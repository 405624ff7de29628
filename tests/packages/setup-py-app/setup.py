# A project that still builds with setup.py: `python setup.py bdist_click`.
from setuptools import setup

setup(
    name="legacy-py",
    version="0.3",
    packages=["legacypy"],
    install_requires=[],
)
