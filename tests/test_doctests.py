"""The examples in public docstrings run and print what they show."""

import doctest

import pytest

from pullback import api, custom, rules


@pytest.mark.parametrize("module", [api, custom, rules], ids=lambda m: m.__name__)
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
