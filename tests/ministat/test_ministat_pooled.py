"""ministat's report and the audit read Student's t from :func:`abstat.stats.student.pooled_t`, typed by the
annotations of :class:`abstat.stats.student.PooledT` (mypy checks the readers against them).  PooledT sets its
fields from ``__slots__`` through ``**fields``, which mypy cannot see: the annotations must name exactly the
slots, each with the type pooled_t really sets, or mypy would check the readers against a fiction."""

import random
import typing

import pytest

from abstat.stats.student import CONFIDENCE_LEVELS, PooledT, pooled_t


def test_the_annotations_are_the_slots() -> None:
    assert list(typing.get_type_hints(PooledT)) == list(PooledT.__slots__)


@pytest.mark.parametrize("seed", range(20))
def test_pooled_t_sets_every_field_with_its_annotated_type(seed: int) -> None:
    rng = random.Random(seed)
    n1, n2 = rng.choice([(2, 2), (5, 500), (3, 7), (30, 30)])
    mean1, mean2 = rng.uniform(-1e3, 1e3), rng.uniform(-1e3, 1e3)
    sd1, sd2 = rng.choice([0.0, rng.uniform(0, 50)]), rng.uniform(0, 50)
    result = pooled_t(n1, mean1, sd1, n2, mean2, sd2, rng.choice(sorted(CONFIDENCE_LEVELS)))
    for name, annotation in typing.get_type_hints(PooledT).items():
        assert type(getattr(result, name)) is annotation, name
