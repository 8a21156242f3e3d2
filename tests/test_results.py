"""Result files: round trip through HDF5, CSV export, atomic writes."""
import csv

import h5py
import numpy as np
import pytest

from multibody import Result, Series, simulate
from multibody.models import MODELS


@pytest.fixture(scope="module")
def result():
    return simulate(MODELS["slider-crank"].factory(), t_end=0.2)


def test_hdf5_round_trip(result, tmp_path):
    path = result.save(tmp_path / "run.h5")
    back = Result.load(path)
    np.testing.assert_array_equal(back.t, result.t)
    assert back.series.keys() == result.series.keys()
    for name, s in result.series.items():
        np.testing.assert_array_equal(back[name], s.data)
        assert back.series[name].labels == s.labels
    assert back.summary["model"] == "slider-crank"
    assert back.summary["final_q"] == result.summary["final_q"]


def test_file_is_self_describing(result, tmp_path):
    """A plain HDF5 reader finds the time axis and the labels without multibody."""
    path = result.save(tmp_path / "run.h5")
    with h5py.File(path) as h5:
        assert h5["time"].attrs["unit"] == "s"
        labels = [str(x) for x in h5["series/q"].attrs["labels"]]
        assert labels == list(result.coordinate_names)
        assert h5["series/multipliers"].shape == (len(result.t), len(result.series["multipliers"].labels))


def test_csv_export(result, tmp_path):
    path = result.to_csv(tmp_path / "run.csv")
    with open(path) as fh:
        rows = list(csv.reader(fh))
    assert rows[0][0] == "t" and "q:slider.x" in rows[0] and "multipliers:P.normal" in rows[0]
    assert len(rows) == len(result.t) + 1
    col = rows[0].index("q:slider.x")
    np.testing.assert_allclose([float(r[col]) for r in rows[1:]], result.column("q", "slider.x"))


def test_failed_save_keeps_the_old_file(result, tmp_path):
    path = result.save(tmp_path / "run.h5")
    before = path.read_bytes()
    bad = Result(result.t, {"q": Series(np.array([object()] * len(result.t)), ("x",))}, {})
    with pytest.raises(Exception):
        bad.save(path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["run.h5"]
