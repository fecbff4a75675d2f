"""Service laws as lbmc parameterises them (src/core/service.c) and phase-type helpers."""

import math

import numpy as np
import pytest
from scipy import integrate

from lbmc_analysis.limits import service as sv

LAWS = ["exponential", "deterministic", "erlang:k=4", "hyperexponential:scv=5", "hyperexponential:p=0.25,r1=0.5,r2=1.5",
        "lognormal:scv=4", "weibull:shape=0.5", "weibull:shape=2", "lomax:shape=3", "lomax:shape=1.5", "lomax:shape=2"]


@pytest.mark.parametrize("text", LAWS)
def test_mean_one_and_integrals(text):
    law = sv.parse_service(text)
    x = np.array([0.0, 0.3, 1.0, 2.5, 7.0])
    # G1 = int_0^x G, H = int_0^x t G, Gbar1 = int_x^inf G: against quadrature of G
    for xi, g1, h, gb in zip(x, law.int_survival(x), law.int_t_survival(x), law.tail_int(x)):
        pts = [1.0] if law.kind == "deterministic" and xi > 1 else None
        q1 = integrate.quad(lambda t: float(law.survival(t)), 0, xi, points=pts, epsabs=1e-13, limit=200)[0]
        qh = integrate.quad(lambda t: t * float(law.survival(t)), 0, xi, points=pts, epsabs=1e-13, limit=200)[0]
        assert g1 == pytest.approx(q1, abs=1e-9)
        assert h == pytest.approx(qh, abs=1e-9)
        assert g1 + gb == pytest.approx(1.0, abs=1e-9)  # mean 1
    # second moment: E[S^2] = 1 + scv (inf for Lomax shape <= 2)
    assert law.moment(2) == pytest.approx(1 + law.scv) if math.isfinite(law.scv) else math.isinf(law.moment(2))


def test_hyperexponential_matches_the_c_side():
    # service.c: q = (2/(C+1)) / (2 (1 + sqrt((C-1)/(C+1)))), p = 1 - q, r1 = 2p, r2 = 2q
    C = 20.0
    q = (2 / (C + 1)) / (2 * (1 + math.sqrt((C - 1) / (C + 1))))
    ph = sv.ph_hyperexponential(C)
    np.testing.assert_allclose(ph.alpha, [1 - q, q], rtol=1e-15)
    np.testing.assert_allclose(np.diag(ph.T), [-2 * (1 - q), -2 * q], rtol=1e-15)
    assert ph.mean == pytest.approx(1.0, rel=1e-14) and ph.scv == pytest.approx(C, rel=1e-12)
    # balanced means p/r1 = (1-p)/r2 = 1/2
    assert ph.alpha[0] / -ph.T[0, 0] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="scv = 0.5 is not allowed"):
        sv.ph_hyperexponential(0.5)
    with pytest.raises(ValueError, match="mean must be 1"):
        sv.ph_hyperexponential(p=0.5, r1=1.0, r2=2.0)


def test_phase_type_helpers():
    e = sv.ph_erlang(4)
    assert e.mean == pytest.approx(1.0) and e.scv == pytest.approx(0.25)
    cx = sv.ph_coxian([3.0, 1.0, 0.5], [0.5, 0.2])
    assert cx.mean == pytest.approx(1.0, rel=1e-13)
    c2 = sv.ph_coxian2(4.0)
    assert c2.mean == pytest.approx(1.0) and c2.scv == pytest.approx(4.0)
    # speed scaling: time S / mu
    s = sv.ph_erlang(3).scaled(2.0)
    assert s.mean == pytest.approx(0.5)
    # survival of a phase-type law vs the closed form of Erlang
    law = sv.parse_service("erlang:k=3")
    np.testing.assert_allclose(sv.ServiceLaw(sv.ph_erlang(3)).survival([0.5, 2.0]), law.survival([0.5, 2.0]),
                               rtol=1e-12)
    with pytest.raises(ValueError, match="integer k"):
        sv.ph_erlang(2.5)
    with pytest.raises(ValueError, match="scv >= 0.5"):
        sv.ph_coxian2(0.3)
    with pytest.raises(ValueError, match="alpha"):
        sv.PhaseType([0.5, 0.4], -np.eye(2))


def test_parse_errors_name_the_value():
    with pytest.raises(ValueError, match="'gamma' is not a service distribution"):
        sv.parse_service("gamma:k=2")
    with pytest.raises(ValueError, match="shape = 1 is not allowed"):
        sv.parse_service("lomax:shape=1")
    with pytest.raises(ValueError, match="'scv' is not a parameter of erlang"):
        sv.parse_service("erlang:scv=2")
    with pytest.raises(ValueError, match="needs the parameter shape"):
        sv.parse_service("weibull")
    assert sv.parse_service(None).is_exponential and sv.parse_service("").is_exponential
    assert sv.parse_service("lomax:shape=1.5").scv == math.inf


# lbmc's phase-type texts as the results files and `lbmc sim --limit` pass them: their lists
# hold commas, and values may be fractions (a job's mapping is kept as written)
PH_TEXTS = {
    "ph:alpha=[0.5,0.5],T=[[-2,1],[0,-1]]": (1.0, [0.5, 0.5], [[-2, 1], [0, -1]]),
    "ph:alpha=1,T=-1": (1.0, [1.0], [[-1.0]]),
    "ph:alpha=[1/2, 1/2, 0],T=[[-73/22, 73/44, 73/88], [73/88, -73/44, 0], [73/44, 0, -73/11]]": (None, None, None),
    "coxian:scv=4": (4.0, [1, 0], [[-2, 0.25], [0, -0.25]]),
    "coxian:r=[2,2],p=[1]": (0.5, [1, 0], [[-2, 2], [0, -2]]),
    "coxian:r=[1]": (1.0, [1.0], [[-1.0]]),
}


@pytest.mark.parametrize("text", sorted(PH_TEXTS))
def test_phase_type_texts(text):
    scv, alpha, T = PH_TEXTS[text]
    law = sv.parse_service(text)
    assert law.kind == "phase-type" and law.text == text and law.ph.mean == pytest.approx(1.0, abs=1e-12)
    if scv is not None:
        assert law.scv == pytest.approx(scv, rel=1e-12)
        np.testing.assert_allclose(law.ph.alpha, alpha, rtol=1e-15)
        np.testing.assert_allclose(law.ph.T, T, rtol=1e-15)
    # hyperexponential's three-parameter form with fractions, as a job's mapping writes it
    h = sv.parse_service("hyperexponential:p=1/4,r1=1/2,r2=3/2")
    assert h.p == pytest.approx(0.25) and h.r2 == pytest.approx(1.5)


@pytest.mark.parametrize("text, msg", [
    ("ph:alpha=[1,0],T=[[-2,3],[0,-2]]", "row sums"),
    ("ph:alpha=[0.5,0.4],T=[[-1,0],[0,-1]]", "alpha"),
    ("ph:alpha=[1],T=[[-2]]", "the mean is 0.5"),
    ("ph:alpha=[1,0],T=[[-1,0]]", "2 rows of 2"),
    ("ph:alpha=[1,0],T=[[-1,0],[0,-1]", "not closed"),
    ("ph:alpha=[nan],T=[[-1]]", "finite"),
    ("ph:T=[[-1]]", "alpha and T"),
    ("coxian:r=[1,1],p=[0.5]", "the mean is 1.5"),
    ("coxian:scv=0.4", "0.5 <= C"),
    ("coxian:scv=2,r=[1]", "not both"),
    ("lognormal:scv=[4]", "a number is required"),
])
def test_phase_type_texts_refused(text, msg):
    with pytest.raises(ValueError, match=msg.replace("(", r"\(").replace("[", r"\[")):
        sv.parse_service(text)
