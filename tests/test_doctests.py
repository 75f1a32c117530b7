"""The examples in public docstrings run and print what they show."""

import doctest
import importlib

import pytest

from pullback import api
from pullback.rules import registry
from pullback.runtime import custom

CONFIG = importlib.import_module("pullback.config")  # `pullback.config` is the function


@pytest.mark.parametrize("module", [api, custom, registry, CONFIG], ids=lambda m: m.__name__)
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
