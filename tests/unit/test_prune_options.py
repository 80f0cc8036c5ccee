"""PruneOptions: the knobs of a prune's memory and threads, from a call, a block
or the environment, refused with the name of what set them when out of range."""

from __future__ import annotations

import pytest

import skipindex as si
from skipindex.pruning.options import active, from_environment, using


def test_the_environment_sets_the_defaults():
    options = from_environment(
        {
            "SKIPINDEX_PRUNE_BYTES": "1024",
            "SKIPINDEX_UNIT_BYTES": " 0 ",
            "SKIPINDEX_PRUNE_THREADS": "3",
        }
    )
    assert (options.working_bytes, options.unit_bytes, options.threads) == (1024, 0, 3)
    assert from_environment({}) == si.PruneOptions()


@pytest.mark.parametrize(
    ("environ", "named"),
    [
        ({"SKIPINDEX_PRUNE_THREADS": "two"}, "SKIPINDEX_PRUNE_THREADS='two'"),
        ({"SKIPINDEX_PRUNE_THREADS": "-2"}, "SKIPINDEX_PRUNE_THREADS=-2"),
        ({"SKIPINDEX_PRUNE_BYTES": "-1"}, "SKIPINDEX_PRUNE_BYTES=-1"),
    ],
)
def test_a_bad_variable_is_named(environ, named):
    with pytest.raises(si.InvalidOptionError, match=named):
        from_environment(environ)


@pytest.mark.parametrize("bad", [{"threads": -1}, {"unit_bytes": -5}, {"working_bytes": 1.5}])
def test_a_bad_option_is_named(bad):
    (name,) = bad
    with pytest.raises(si.InvalidOptionError, match=f"PruneOptions.{name}") as raised:
        si.PruneOptions(**bad)
    assert isinstance(raised.value, ValueError)


def test_a_block_sets_the_options_and_leaves_them_after():
    before = active()
    chosen = si.PruneOptions(threads=1, unit_bytes=0)
    with using(chosen):
        assert active() == chosen
        with using(None):  # a call without options keeps the block's
            assert active() == chosen
    assert active() == before
