"""Makes `import hopper` find the installed package: run from python/ (python -m pytest tests),
the working directory on sys.path would otherwise shadow it with the unbuilt source tree, and
every test would skip saying the package is not built."""
import os
import sys

_source = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.getcwd()) != _source]
