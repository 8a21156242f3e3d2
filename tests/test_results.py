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
    """A plain HDF5 reader finds the time axis, the labels (as dimension scales) and the units."""
    path = result.save(tmp_path / "run.h5")
    with h5py.File(path) as h5:
        assert h5["time"].attrs["units"] == "s"
        assert [x.decode() for x in h5["coordinate"][()]] == list(result.coordinate_names)
        assert h5["q"].dims[0][0] == h5["time"] and h5["q"].dims[1][0] == h5["coordinate"]
        assert h5["multipliers"].shape == (len(result.t), len(result.series["multipliers"].labels))
        assert h5["energy"].attrs["units"] == "J"
        units = dict(zip(result.coordinate_names, h5["v"].attrs["column_units"]))
        assert units["slider.x"] == "m s-1" and units["crank.theta"] == "rad s-1"


def test_xarray_opens_the_file(result, tmp_path):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("h5netcdf")
    path = result.save(tmp_path / "run.h5")
    with xr.open_dataset(path, engine="h5netcdf") as ds:
        assert ds.q.dims == ("time", "coordinate")
        np.testing.assert_array_equal(ds.time.values, result.t)
        assert list(ds.coordinate.values) == list(result.coordinate_names)
        np.testing.assert_array_equal(ds.q.sel(coordinate="slider.x").values, result.column("q", "slider.x"))
        assert ds.energy.attrs["units"] == "J" and ds.time.attrs["units"] == "s"
    mem = result.to_xarray()
    np.testing.assert_array_equal(mem.v.sel(coordinate="crank.theta").values, result.column("v", "crank.theta"))
    df = result.to_dataframe()
    assert df.index.name == "time" and len(df) == len(result.t)
    np.testing.assert_array_equal(df["q"]["slider.x"].to_numpy(), result.column("q", "slider.x"))


def test_missing_extra_is_named(result, monkeypatch):
    import sys

    from multibody import MultibodyError

    monkeypatch.setitem(sys.modules, "xarray", None)
    with pytest.raises(MultibodyError, match=r"multibody\[data\]"):
        result.to_xarray()


def test_repr_is_short(result):
    assert len(repr(result)) < 1000 and "slider-crank" in repr(result)
    assert "<table>" in result._repr_html_() and len(result._repr_html_()) < 3000


def test_files_follow_the_umask(result, tmp_path):
    import os

    old = os.umask(0o022)
    try:
        h5, csvp = result.save(tmp_path / "run.h5"), result.to_csv(tmp_path / "run.csv")
    finally:
        os.umask(old)
    assert oct(os.stat(h5).st_mode & 0o777) == oct(0o644) == oct(os.stat(csvp).st_mode & 0o777)


def test_version_1_files_still_load(result, tmp_path):
    """The layout before issue 13: /series/<name> with labels, unit and description attributes."""
    import json

    path = tmp_path / "old.h5"
    with h5py.File(path, "w") as h5:
        h5.attrs["format"], h5.attrs["version"] = "multibody-result", 1
        h5.attrs["summary"], h5.attrs["events"] = json.dumps({"model": "slider-crank"}), "[]"
        h5.create_dataset("time", data=result.t).attrs["unit"] = "s"
        ds = h5.create_group("series").create_dataset("q", data=result.q)
        ds.attrs["labels"], ds.attrs["unit"], ds.attrs["description"] = list(result.coordinate_names), "", "coordinates"
    back = Result.load(path)
    np.testing.assert_array_equal(back.q, result.q)
    assert back.coordinate_names == result.coordinate_names and back.summary["model"] == "slider-crank"


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


def test_model_without_constraints_round_trips(tmp_path):
    """A free body has no constraint rows, so its multipliers have no labels (empty HDF5 attributes); the
    file loads back. A body falling from rest under g: y(t) = -g t^2 / 2."""
    from multibody import ModelBuilder

    b = ModelBuilder("free-body", gravity=(0.0, -9.81))
    b.add_body("a", mass=1.0, inertia=0.1)
    simulate(b.build(), t_end=0.5).save(tmp_path / "free.h5")
    back = Result.load(tmp_path / "free.h5")
    assert back["multipliers"].shape[1] == 0
    np.testing.assert_allclose(back.column("q", "a.y"), -9.81 * back.t ** 2 / 2, atol=1e-12)
