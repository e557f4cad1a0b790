"""sgp4's pure-Python code (``sgp4.propagation``, ``sgp4.ext``, ``sgp4.functions``: the
reference implementation its C++ extension replaces), staged as written on NumPy scalars and
arrays: each function gives sgp4's own results (values, NumPy or Python types), or a documented
refusal naming the package's line.

The code is nobody's here, and scalar: ``math`` functions of NumPy scalars (``fmod``, ``atan2``,
``acos``, ``sinh``), ``if``/``elif`` cascades on staged floats, ``int()`` and ``round()`` of
staged values, tuples of results, and a propagator that keeps its state and its error message
on the satellite record.
"""

from __future__ import annotations

import numpy as np
import pytest
from autostage.runtime.escapes import TensorEscapeError
from autostage.runtime.tensor import StagingTypeError
from sgp4 import earth_gravity, ext, functions, io, propagation
from staged_results import assert_refused, assert_same

import autostage

TARGETS = ["interpreter", "cpu"]
f64, i64 = np.float64, np.int64
R = np.array([6524.834, 6862.875, 6448.296])
V = np.array([4.901327, 5.533756, -1.976341])
ISS = ("1 25544U 98067A   19343.69339541  .00001764  00000-0  38792-4 0  9991",
       "2 25544  51.6439 211.2001 0007417  17.6667  85.6398 15.50103472202482")
GPS = ("1 28874U 05038A   19343.54869223 -.00000053  00000-0  00000+0 0  9997",
       "2 28874  55.6549 130.2633 0097153 231.6151 127.5163  2.00558574104091")
DEEP = io.twoline2rv(*GPS, earth_gravity.wgs72)  # a 12-hour orbit: the deep-space terms

# name -> (function, argument tuples called in turn on one staged function, rtol): rtol 0 is
# bit for bit; otherwise the README's bound for transcendental functions ("within 4 ulp").
SAME = {
    "gstime": (propagation.gstime, [(f64(2451545.0),), (f64(2460000.25),)], 0),
    "jday": (functions.jday, [(i64(2020), i64(3), i64(4), i64(5), i64(6), f64(7.5)),
                              (2020, 3, 4, 5, 6, f64(7.5))], 0),
    "days2mdhms": (functions.days2mdhms, [(i64(2020), f64(123.456789)),
                                          (i64(2021), f64(59.99999999))], 0),
    "invjday": (ext.invjday, [(f64(2451545.0),), (f64(2460000.75),)], 0),
    "newtonnu": (ext.newtonnu, [(f64(0.1), f64(1.0)), (f64(1.0), f64(1.0)),
                                (f64(1.5), f64(0.5)), (f64(0.0), f64(2.0))], 1e-15),
    "mag": (ext.mag, [(R,)], 0),
    "angle": (ext.angle, [(R, V)], 1e-15),
    "_dpper": (propagation._dpper, [(DEEP, f64(DEEP.inclo), "n", f64(0.0097), f64(0.97),
                                     f64(2.27), f64(4.04), f64(2.2), "i"),
                                    (DEEP, f64(DEEP.inclo), "n", f64(0.01), f64(0.5), f64(2.0),
                                     f64(1.0), f64(3.0), "a")], 1e-14),
}


def propagate_made_here(t):
    """A user's propagation of a record made in the function."""
    satrec = io.twoline2rv(*ISS, earth_gravity.wgs72)
    return propagation.sgp4(satrec, t)


ISS_RECORD = io.twoline2rv(*ISS, earth_gravity.wgs72)


def propagate_global(t):
    return propagation.sgp4(ISS_RECORD, t)


# Refused, with the error, what the message names and the package's file (its line follows).
REFUSED = {
    # Vectors kept in lists of None that a staged branch fills.
    "rv2coe": (ext.rv2coe, (R, V, f64(398600.8)), StagingTypeError,
               "gets a NoneType value", "ext.py:"),
    # sgp4() keeps an error message (a string, or None) on the record, set in a staged branch.
    "sgp4 of a record made in the function": (propagate_made_here, (f64(360.0),),
                                              StagingTypeError,
                                              "variable 'satrec.error_message' is a string",
                                              "propagation.py:"),
    # ... and the time of the last call on a record from outside (README "State").
    "sgp4 of a record from outside": (propagate_global, (f64(360.0),), TensorEscapeError,
                                      "is stored in ISS_RECORD.t", "propagation.py:"),
}




@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", sorted(SAME))
def test_staged_results_are_sgp4s(case, target):
    fn, calls, rtol = SAME[case]
    staged = autostage.convert(fn, target=target)
    for args in calls:
        assert_same(staged(*args), fn(*args), rtol)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refusals_name_the_packages_line(case, target):
    assert_refused(*REFUSED[case], target)
