"""The package under test: the source tree's (python/) unless an installed
one is asked for (QJIT_TEST_INSTALLED=1, e.g. after pip install ./python)."""
import os
import sys

if not os.environ.get("QJIT_TEST_INSTALLED"):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
