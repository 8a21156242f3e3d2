"""The automatic dense/sparse choice (issue 17 misc.): a serial chain in joint angles has a full,
configuration-dependent M(q), which the sparse path would factor and invert at every evaluation (100x
slower at N = 150); a model of bodies (constant, diagonal M) of the same size stays sparse."""
import numpy as np

from multibody.assembly import SPARSE_MIN_COORDINATES, use_sparse, varying_coupled_mass
from multibody.model.chain import serial_chain
from multibody.models.four_bars import n_four_bar
from multibody.simulation import RunOptions, simulate


def _chain(N):
    return serial_chain("chain", lengths=[1.0] * N, masses=[1.0] * N, inertias=[0.1] * N, q0=np.full(N, 0.01))


def test_serial_chain_with_full_mass_matrix_stays_dense():
    chain = _chain(SPARSE_MIN_COORDINATES)
    M = chain.mass(chain.q0)
    assert np.count_nonzero(M) == M.size        # every link moves every one before it: M full
    assert varying_coupled_mass(chain) and not use_sparse(chain, None)
    r = simulate(chain, t_end=1e-3, options=RunOptions(integrator="rk4", step=1e-3))
    assert "sparse" not in str(r.summary.get("linear_algebra", ""))
    assert use_sparse(chain, True)              # still available when asked for


def test_model_of_bodies_of_the_same_size_takes_the_sparse_path():
    model = n_four_bar(cells=50)                # 101 bars, n = 303, constant diagonal M
    assert model.n >= SPARSE_MIN_COORDINATES
    assert not varying_coupled_mass(model) and use_sparse(model, None)
