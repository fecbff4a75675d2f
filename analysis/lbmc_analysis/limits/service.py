"""Service-requirement laws as lbmc parameterises them, and phase-type representations.

Every law has mean 1 (the requirement; a server of speed ``mu`` takes ``S / mu`` time
units), exactly as ``src/core/service.c`` sets it up:

=========================  ==============================================================
text                       law (mean 1)
=========================  ==============================================================
``exponential``            Exp(1)
``deterministic``          S = 1
``erlang:k=K``             Gamma(K, rate K), integer 1 <= K <= 1e6, scv 1/K
``hyperexponential:scv=C`` two exponential phases with balanced means (Whitt's two-moment
                           fit): ``q = (2/(C+1)) / (2 (1 + sqrt((C-1)/(C+1))))``,
                           ``p = 1 - q``, rates ``r1 = 2p``, ``r2 = 2q``; 1 <= C <= 1e12
``hyperexponential:p=P,r1=A,r2=B``  phase 1 with probability P, rate A; else rate B;
                           ``P/A + (1-P)/B = 1`` within 1e-9
``lognormal:scv=C``        ``exp(zeta + sigma Z)``, ``sigma = sqrt(log(1 + C))``,
                           ``zeta = -sigma^2/2``
``weibull:shape=K``        ``P(S > x) = exp(-(x/s)^K)``, ``s = 1/Gamma(1 + 1/K)``, K >= 0.1
``lomax:shape=A``          ``P(S > x) = (1 + x/b)^-A``, ``b = A - 1``, A > 1 (scv
                           ``A/(A-2)`` for A > 2, infinite for A <= 2)
``ph:alpha=[..],T=[[..]]``  phase type (alpha, T), at most 16 phases, mean 1 within 1e-9
``coxian:scv=C``           Exp(2), then with probability 1/(2C) also Exp(1/C); C >= 0.5
``coxian:r=[..],p=[..]``   phases in series at rates r, continuing with probabilities p
=========================  ==============================================================

:class:`ServiceLaw` gives, for each, the survival function ``G(x) = P(S > x)``, the
integrated survival ``G1(x) = int_0^x G = E[min(S, x)]``, its complement
``Gbar1(x) = int_x^inf G = E[(S - x)^+]`` (computed directly, not as ``1 - G1``, so
that it keeps its relative accuracy in the tail), ``H(x) = int_0^x t G(t) dt =
E[min(S, x)^2]/2`` and the moments; all in closed form (scipy.special), to about 1e-15
relative except where stated. The phase-type laws (exponential, Erlang,
hyperexponential, and any :class:`PhaseType` given explicitly, e.g. a Coxian) also
give ``(alpha, T)``.

A :class:`PhaseType` ``(alpha, T)``: ``alpha`` (m,) the initial phase probabilities
(summing to 1: no atom at 0), ``T`` (m, m) the sub-generator; ``s = -T 1`` the exit
rates; ``P(S > x) = alpha exp(T x) 1``, ``E[S^k] = k! alpha (-T)^-k 1``. Speed ``mu``
scales ``T`` to ``mu T`` (time ``S / mu``). Reference: M. F. Neuts, *Matrix-geometric
solutions in stochastic models*, Johns Hopkins 1981, ch. 2.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy import special

__all__ = [
    "PhaseType",
    "ServiceLaw",
    "parse_service",
    "ph_exponential",
    "ph_erlang",
    "ph_hyperexponential",
    "ph_coxian",
    "ph_coxian2",
    "HYPER_SCV_MAX",
    "ERLANG_K_MAX",
    "WEIBULL_SHAPE_MIN",
]

# The C side's limits (src/core/service.c), so that the same texts are accepted.
HYPER_SCV_MAX = 1e12
ERLANG_K_MAX = 1e6
WEIBULL_SHAPE_MIN = 0.1
HYPER_MEAN_TOL = 1e-9
PH_MAX_PHASES = 16  # LBMC_PH_MAX_PHASES

_KINDS = ("exponential", "deterministic", "erlang", "hyperexponential", "lognormal", "weibull", "lomax",
          "phase-type")


def _num(name, v):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
        raise ValueError(f"{name} = {v!r} is not allowed; a real number is required")
    v = float(v)
    if math.isnan(v):
        raise ValueError(f"{name} = nan is not allowed; a real number is required")
    return v


# ----------------------------------------------------------------------------------
# phase-type
# ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PhaseType:
    """A phase-type law ``(alpha, T)`` (Neuts 1981, ch. 2).

    Parameters
    ----------
    alpha : (m,) initial probabilities, >= 0, summing to 1 (within 1e-12).
    T : (m, m) sub-generator: off-diagonal >= 0, row sums <= 0, nonsingular.

    ``mean = alpha (-T)^-1 1`` (time units of T's rates). Use :meth:`scaled` for a
    server of speed mu (``T -> mu T``) and :meth:`normalized` for mean 1.
    """

    alpha: np.ndarray
    T: np.ndarray

    def __post_init__(self):
        a = np.atleast_1d(np.asarray(self.alpha, dtype=float))
        T = np.atleast_2d(np.asarray(self.T, dtype=float))
        if a.ndim != 1 or T.shape != (a.size, a.size):
            raise ValueError(f"alpha must have shape (m,) and T (m, m); got {a.shape} and {T.shape}")
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(T))):
            raise ValueError("alpha and T must be finite")
        if np.any(a < 0) or abs(a.sum() - 1) > 1e-12:
            raise ValueError(f"alpha = {a.tolist()} is not allowed; nonnegative entries summing to 1 are required")
        off = T - np.diag(np.diag(T))
        if np.any(off < 0):
            raise ValueError("T must have nonnegative off-diagonal entries (a sub-generator)")
        if np.any(T.sum(axis=1) > 1e-12 * np.abs(np.diag(T))):
            raise ValueError(f"T's row sums must be <= 0 (exit rates >= 0); got {T.sum(axis=1).tolist()}")
        try:
            np.linalg.solve(-T, np.ones(a.size))
        except np.linalg.LinAlgError:
            raise ValueError("T must be nonsingular (every phase must lead to absorption)") from None
        object.__setattr__(self, "alpha", a)
        object.__setattr__(self, "T", T)

    @property
    def m(self) -> int:
        """Number of phases."""
        return self.alpha.size

    @property
    def exit(self) -> np.ndarray:
        """Exit rates ``s = -T 1`` (m,)."""
        return -self.T.sum(axis=1)

    def moment(self, k: int) -> float:
        """``E[S^k] = k! alpha (-T)^-k 1``."""
        v = np.ones(self.m)
        for _ in range(k):
            v = np.linalg.solve(-self.T, v)
        return float(math.factorial(k) * self.alpha @ v)

    @property
    def mean(self) -> float:
        return self.moment(1)

    @property
    def scv(self) -> float:
        m1 = self.mean
        return self.moment(2) / m1**2 - 1.0

    def residual_means(self) -> np.ndarray:
        """``(-T)^-1 1`` (m,): the mean remaining time from each phase."""
        return np.linalg.solve(-self.T, np.ones(self.m))

    def scaled(self, mu: float) -> "PhaseType":
        """The time ``S / mu`` on a server of speed mu > 0: ``(alpha, mu T)``."""
        mu = _num("mu", mu)
        if not mu > 0 or math.isinf(mu):
            raise ValueError(f"mu = {mu!r} is not allowed; a finite speed > 0 is required")
        return PhaseType(self.alpha, mu * self.T)

    def normalized(self) -> "PhaseType":
        """The same shape with mean 1 (``T`` multiplied by the mean)."""
        return PhaseType(self.alpha, self.T * self.mean)

    def survival(self, x) -> np.ndarray:
        """``P(S > x) = alpha exp(T x) 1`` for an array of x >= 0 (eigen-decomposition
        when T is diagonalisable with a well-conditioned basis, else scipy's expm)."""
        x = np.asarray(x, dtype=float)
        out = np.empty(x.shape)
        from scipy.linalg import expm

        flat = x.ravel()
        res = out.ravel()
        for i, xi in enumerate(flat):
            res[i] = float(self.alpha @ expm(self.T * xi) @ np.ones(self.m))
        return out


def ph_exponential() -> PhaseType:
    """Exp(1): ``alpha = (1)``, ``T = (-1)``."""
    return PhaseType(np.array([1.0]), np.array([[-1.0]]))


def ph_erlang(k: int) -> PhaseType:
    """Erlang-k with mean 1: k phases of rate k in series (lbmc's ``erlang:k=K``)."""
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Real) or float(k) != math.floor(float(k)) \
            or not 1 <= float(k) <= ERLANG_K_MAX:
        raise ValueError(f"k = {k!r} is not allowed; erlang needs an integer k from 1 to {ERLANG_K_MAX:.0f}")
    k = int(k)
    T = -k * np.eye(k) + k * np.eye(k, k=1)
    a = np.zeros(k)
    a[0] = 1.0
    return PhaseType(a, T)


def _hyper_params(scv=None, p=None, r1=None, r2=None):
    """(p, q = 1 - p, r1, r2) of lbmc's hyperexponential, exactly as src/core/service.c computes
    them (q without cancellation)."""
    if scv is not None:
        if p is not None or r1 is not None or r2 is not None:
            raise ValueError("hyperexponential: give either scv or p, r1, r2, not both")
        C = _num("scv", scv)
        if not (1 <= C <= HYPER_SCV_MAX):
            raise ValueError(f"scv = {C:g} is not allowed; a hyperexponential has scv >= 1 "
                             f"(and here at most {HYPER_SCV_MAX:g})")
        # balanced means p/r1 = (1-p)/r2 = 1/2; q = 1 - p without cancellation
        q = (2 / (C + 1)) / (2 * (1 + math.sqrt((C - 1) / (C + 1))))
        p = 1 - q
        return p, q, 2 * p, 2 * q
    if p is None or r1 is None or r2 is None:
        raise ValueError("hyperexponential needs scv, or all of p, r1 and r2")
    p, r1, r2 = _num("p", p), _num("r1", r1), _num("r2", r2)
    if not (0 < p < 1) or not (0 < r1 < math.inf) or not (0 < r2 < math.inf):
        raise ValueError(f"p = {p:g}, r1 = {r1:g}, r2 = {r2:g} are not allowed; 0 < p < 1 and finite rates "
                         "r1, r2 > 0 are required")
    mean = p / r1 + (1 - p) / r2
    if abs(mean - 1) > HYPER_MEAN_TOL:
        raise ValueError(f"p/r1 + (1-p)/r2 = {mean:.12g}; allowed: the mean must be 1 (within {HYPER_MEAN_TOL:g})")
    return p, 1 - p, r1, r2


def ph_hyperexponential(scv=None, *, p=None, r1=None, r2=None) -> PhaseType:
    """Two-phase hyperexponential as lbmc's ``hyperexponential:scv=C`` (balanced means) or
    ``hyperexponential:p=P,r1=A,r2=B`` (src/core/service.c, ``lbmc_svc_hyper``)."""
    p, q, r1, r2 = _hyper_params(scv, p, r1, r2)
    return PhaseType(np.array([p, q]), np.diag([-r1, -r2]))


def ph_coxian(rates, cont, *, normalize=True) -> PhaseType:
    """Coxian law: phase i (rate ``rates[i]``) continues to phase i+1 with probability
    ``cont[i]`` (``len(cont) = len(rates) - 1``), else ends; starts in phase 1.

    ``normalize=True`` rescales the rates so that the mean is 1 (lbmc's convention).
    """
    r = np.atleast_1d(np.asarray(rates, dtype=float))
    c = np.atleast_1d(np.asarray(cont, dtype=float)) if len(np.atleast_1d(cont)) else np.zeros(0)
    if r.ndim != 1 or r.size < 1 or not np.all(np.isfinite(r)) or np.any(r <= 0):
        raise ValueError(f"rates = {r.tolist()} is not allowed; one or more finite rates > 0 are required")
    if c.size != r.size - 1 or np.any(c < 0) or np.any(c > 1):
        raise ValueError(f"cont = {c.tolist()} is not allowed; {r.size - 1} probabilities in [0, 1] are required")
    m = r.size
    T = -np.diag(r) + np.diag(c * r[:-1], k=1) if m > 1 else -np.diag(r)
    a = np.zeros(m)
    a[0] = 1.0
    ph = PhaseType(a, T)
    return ph.normalized() if normalize else ph


def ph_coxian2(scv) -> PhaseType:
    """Two-phase Coxian with mean 1 and squared coefficient of variation ``scv >= 1/2``
    (Marie's fit: rate 2, continue with probability ``1/(2 scv)`` to a phase of rate
    ``1/scv``; e.g. Bolch et al., *Queueing networks and Markov chains*, 2006, sec. 1.3.1)."""
    C = _num("scv", scv)
    if not (0.5 <= C < math.inf):
        raise ValueError(f"scv = {C:g} is not allowed; a two-phase Coxian has scv >= 0.5")
    p = 1 / (2 * C)
    return ph_coxian([2.0, 2.0 * p], [p], normalize=False)


# ----------------------------------------------------------------------------------
# the laws lbmc knows
# ----------------------------------------------------------------------------------


class ServiceLaw:
    """One service-requirement law with mean 1, as lbmc parameterises it.

    Build with :func:`parse_service` (the text of a results file or job, e.g.
    ``"lognormal:scv=4"``) or from a :class:`PhaseType` (``ServiceLaw(ph)``, which is
    normalised to mean 1). Attributes: ``kind``, ``params`` (dict), ``text`` (lbmc's
    text), ``scv`` (``inf`` for Lomax shape <= 2), ``ph`` (a :class:`PhaseType` or
    None), ``smooth`` (False only for deterministic: G jumps at 1).

    All functions of x accept arrays (x >= 0, time in requirement units); for a server
    of speed mu use ``x * mu`` and the rules in :func:`lbmc_analysis.limits.lwl`.
    """

    def __init__(self, kind, **params):
        if isinstance(kind, PhaseType):
            ph = kind.normalized()
            self.kind = "phase-type"
            self.params = {"alpha": ph.alpha.tolist(), "T": ph.T.tolist()}
            self.ph = ph
            self.text = "phase-type"
            self.scv = ph.scv
            self.smooth = True
            return
        if kind not in _KINDS:
            raise ValueError(f"service '{kind}' is not allowed; allowed: {', '.join(_KINDS[:-1])}")
        self.kind = kind
        self.params = dict(params)
        self.smooth = kind != "deterministic"
        self.ph = None
        if kind == "exponential":
            self.scv, self.text, self.ph = 1.0, "exponential", ph_exponential()
        elif kind == "deterministic":
            self.scv, self.text = 0.0, "deterministic"
        elif kind == "erlang":
            k = params["k"]
            self.ph = ph_erlang(k)
            self.k = int(k)
            self.scv, self.text = 1.0 / self.k, f"erlang:k={self.k}"
        elif kind == "hyperexponential":
            p, q, r1, r2 = _hyper_params(params.get("scv"), params.get("p"), params.get("r1"), params.get("r2"))
            self.p, self.q, self.r1, self.r2 = p, q, r1, r2
            self.ph = PhaseType(np.array([p, q]), np.diag([-r1, -r2]))
            self.scv = 2 * (p / r1**2 + q / r2**2) - 1
            self.text = (f"hyperexponential:scv={params['scv']:g}" if params.get("scv") is not None
                         else f"hyperexponential:p={p:g},r1={r1:g},r2={r2:g}")
        elif kind == "lognormal":
            C = _num("scv", params["scv"])
            if not (0 < C < math.inf):
                raise ValueError(f"scv = {C:g} is not allowed; lognormal needs a finite scv > 0")
            self.sigma = math.sqrt(math.log1p(C))
            self.zeta = -0.5 * self.sigma**2
            self.scv, self.text = C, f"lognormal:scv={C:g}"
        elif kind == "weibull":
            K = _num("shape", params["shape"])
            if not (WEIBULL_SHAPE_MIN <= K < math.inf):
                raise ValueError(f"shape = {K:g} is not allowed; weibull needs a finite shape >= {WEIBULL_SHAPE_MIN:g}")
            self.shape = K
            self.scale = math.exp(-special.gammaln(1 + 1 / K))
            self.scv = max(0.0, math.expm1(special.gammaln(1 + 2 / K) - 2 * special.gammaln(1 + 1 / K)))
            self.text = f"weibull:shape={K:g}"
        elif kind == "lomax":
            A = _num("shape", params["shape"])
            if not (1 < A < math.inf):
                raise ValueError(f"shape = {A:g} is not allowed; lomax needs a finite shape > 1 (a finite mean)")
            self.shape, self.b = A, A - 1
            self.scv = A / (A - 2) if A > 2 else math.inf
            self.text = f"lomax:shape={A:g}"
        else:  # pragma: no cover
            raise ValueError(f"service '{kind}' is not allowed")

    def __repr__(self):
        return f"ServiceLaw({self.text!r})"

    @property
    def mean(self) -> float:
        return 1.0

    @property
    def is_exponential(self) -> bool:
        return self.kind == "exponential"

    def moment(self, k: int) -> float:
        """``E[S^k]`` (``inf`` where it does not exist: Lomax with shape <= k)."""
        if self.kind == "deterministic":
            return 1.0
        if self.ph is not None:
            return self.ph.moment(k)
        if self.kind == "lognormal":
            return math.exp(k * self.zeta + 0.5 * k * k * self.sigma**2)
        if self.kind == "weibull":
            return self.scale**k * math.exp(special.gammaln(1 + k / self.shape))
        if self.shape <= k:
            return math.inf
        # Lomax: E[S^k] = b^k k! / prod_{i=1..k} (a - i)
        return self.b**k * math.factorial(k) / math.prod(self.shape - i for i in range(1, k + 1))

    # survival and its integrals ---------------------------------------------------

    def survival(self, x) -> np.ndarray:
        """``G(x) = P(S > x)``."""
        x = np.asarray(x, dtype=float)
        if self.kind == "deterministic":
            return (x < 1.0).astype(float)
        if self.kind in ("exponential", "hyperexponential"):
            return self._h2(x, lambda r: np.exp(-r * x))
        if self.kind == "erlang":
            return special.gammaincc(self.k, self.k * x)
        if self.kind == "lognormal":
            with np.errstate(divide="ignore"):
                z = (np.log(x) - self.zeta) / self.sigma
            return special.ndtr(-z)
        if self.kind == "weibull":
            return np.exp(-np.power(x / self.scale, self.shape))
        if self.kind == "lomax":
            return np.exp(-self.shape * np.log1p(x / self.b))
        return self.ph.survival(x)

    def density(self, x) -> np.ndarray:
        """``g(x) = -G'(x)`` for x > 0 (deterministic: not a density; raises)."""
        x = np.asarray(x, dtype=float)
        if self.kind == "deterministic":
            raise ValueError("deterministic service has no density")
        if self.kind in ("exponential", "hyperexponential"):
            return self._h2(x, lambda r: r * np.exp(-r * x))
        if self.kind == "erlang":
            k = self.k
            return np.exp(k * np.log(k) + (k - 1) * np.log(np.maximum(x, 1e-300)) - k * x - special.gammaln(k))
        if self.kind == "lognormal":
            with np.errstate(divide="ignore"):
                z = (np.log(x) - self.zeta) / self.sigma
                return np.where(x > 0, np.exp(-0.5 * z * z) / (x * self.sigma * math.sqrt(2 * math.pi)), 0.0)
        if self.kind == "weibull":
            y = x / self.scale
            with np.errstate(divide="ignore"):
                return self.shape / self.scale * np.power(y, self.shape - 1) * np.exp(-np.power(y, self.shape))
        if self.kind == "lomax":
            return self.shape / self.b * np.exp(-(self.shape + 1) * np.log1p(x / self.b))
        raise ValueError("density of a general phase-type law: not implemented")

    def _h2(self, x, f):
        if self.kind == "exponential":
            return f(1.0)
        return self.p * f(self.r1) + self.q * f(self.r2)

    def int_survival(self, x) -> np.ndarray:
        """``G1(x) = int_0^x G(t) dt = E[min(S, x)]``."""
        x = np.asarray(x, dtype=float)
        if self.kind == "deterministic":
            return np.minimum(x, 1.0)
        if self.kind in ("exponential", "hyperexponential"):
            return self._h2(x, lambda r: -np.expm1(-r * x) / r)
        if self.kind == "lomax":
            return -np.expm1((1 - self.shape) * np.log1p(x / self.b))
        return 1.0 - self.tail_int(x)

    def tail_int(self, x) -> np.ndarray:
        """``Gbar1(x) = int_x^inf G(t) dt = E[(S - x)^+]`` (accurate in the tail)."""
        x = np.asarray(x, dtype=float)
        if self.kind == "deterministic":
            return np.maximum(1.0 - x, 0.0)
        if self.kind in ("exponential", "hyperexponential"):
            return self._h2(x, lambda r: np.exp(-r * x) / r)
        if self.kind == "erlang":
            k = self.k
            return special.gammaincc(k + 1, k * x) - x * special.gammaincc(k, k * x)
        if self.kind == "lognormal":
            with np.errstate(divide="ignore"):
                z = (np.log(x) - self.zeta) / self.sigma
            return np.maximum(special.ndtr(-(z - self.sigma)) - x * special.ndtr(-z), 0.0)
        if self.kind == "weibull":
            y = np.power(x / self.scale, self.shape)
            return np.maximum(special.gammaincc(1 + 1 / self.shape, y) - x * np.exp(-y), 0.0)
        if self.kind == "lomax":
            return np.exp((1 - self.shape) * np.log1p(x / self.b))
        raise ValueError("tail integral of a general phase-type law: not implemented")

    def int_t_survival(self, x) -> np.ndarray:
        """``H(x) = int_0^x t G(t) dt = E[min(S, x)^2] / 2``."""
        x = np.asarray(x, dtype=float)
        if self.kind == "deterministic":
            return 0.5 * np.minimum(x, 1.0) ** 2
        if self.kind in ("exponential", "hyperexponential"):
            return self._h2(x, lambda r: (-np.expm1(-r * x) - r * x * np.exp(-r * x)) / r**2)
        if self.kind == "erlang":
            k = self.k
            part = (k + 1) / k * special.gammainc(k + 2, k * x)  # E[S^2; S <= x]
            return 0.5 * (part + x * x * special.gammaincc(k, k * x))
        if self.kind == "lognormal":
            with np.errstate(divide="ignore"):
                z = (np.log(x) - self.zeta) / self.sigma
            part = math.exp(self.sigma**2) * special.ndtr(z - 2 * self.sigma)
            return 0.5 * (part + x * x * special.ndtr(-z))
        if self.kind == "weibull":
            y = np.power(x / self.scale, self.shape)
            part = self.scale**2 * math.exp(special.gammaln(1 + 2 / self.shape)) * special.gammainc(1 + 2 / self.shape, y)
            return 0.5 * (part + x * x * np.exp(-y))
        if self.kind == "lomax":
            a, b = self.shape, self.b
            ly = np.log1p(x / b)

            def e(c):  # (y^c - 1)/c, with its limit log y at c = 0
                return np.expm1(c * ly) / c if c != 0 else ly

            return b * b * (e(2 - a) - e(1 - a))
        raise ValueError("H of a general phase-type law: not implemented")


def parse_service(text) -> ServiceLaw:
    """A :class:`ServiceLaw` from lbmc's text (``"erlang:k=4"``, ``"hyperexponential:scv=20"``,
    ``"lomax:shape=2.5"``, ...; None or ``""`` mean exponential), with the C side's checks
    (src/core/service.c): the same names, ranges and messages. A :class:`ServiceLaw` or
    :class:`PhaseType` passes through (the latter normalised to mean 1)."""
    if text is None:
        return ServiceLaw("exponential")
    if isinstance(text, ServiceLaw):
        return text
    if isinstance(text, PhaseType):
        return ServiceLaw(text)
    if not isinstance(text, str):
        raise ValueError(f"service = {text!r} is not allowed; a text such as 'lognormal:scv=4' is required")
    t = text.strip()
    if not t:
        return ServiceLaw("exponential")
    name, _, rest = t.partition(":")
    name = name.strip()
    params = {}
    if rest.strip():
        # the lists of ph and coxian hold commas: split at the commas outside brackets only
        for kv in _split_top(text, rest):
            if "=" not in kv:
                raise ValueError(f"service '{text}' is not allowed; write NAME[:KEY=VALUE[,KEY=VALUE...]], "
                                 "e.g. lognormal:scv=4")
            k, v = kv.split("=", 1)
            k = k.strip()
            if k in params:
                raise ValueError(f"service '{text}': '{k}' is given twice; give each parameter once")
            params[k] = _nested(text, k, v)
    allowed = {"exponential": (), "deterministic": (), "erlang": ("k",), "hyperexponential": ("scv", "p", "r1", "r2"),
               "lognormal": ("scv",), "weibull": ("shape",), "lomax": ("shape",), "ph": ("alpha", "T"),
               "coxian": ("scv", "r", "p")}
    if name not in allowed:
        raise ValueError(f"service '{name}' is not a service distribution; allowed: exponential, deterministic, "
                         "erlang, hyperexponential, lognormal, weibull, lomax, ph, coxian")
    for k in params:
        if k not in allowed[name]:
            raise ValueError(f"service '{text}': '{k}' is not a parameter of {name}"
                             + (f"; allowed: {', '.join(allowed[name])}" if allowed[name] else "; it has none"))
    if name in ("erlang", "lognormal", "weibull", "lomax") and not params:
        raise ValueError(f"service '{text}': {name} needs the parameter {allowed[name][0]}")
    for k, v in params.items():
        if isinstance(v, list) and name not in ("ph", "coxian"):
            raise ValueError(f"service '{text}': {k} is a list; a number is required")
    if name == "ph":
        return _law_of(t, _ph_law(text, params))
    if name == "coxian":
        return _law_of(t, _coxian_law(text, params))
    return ServiceLaw(name, **params)


def _split_top(text, s):
    """``s`` split at the commas outside ``[...]``."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(s):
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"service '{text}': a ']' closes no '['")
        elif c == "," and depth == 0:
            parts.append(s[start:i])
            start = i + 1
    if depth != 0:
        raise ValueError(f"service '{text}': a '[' is not closed")
    parts.append(s[start:])
    return parts


def _nested(text, name, v):
    """A parameter's value as lbmc writes it: a number (``0.5``, ``1e-3``, ``1/3``) or a
    bracketed list of them, possibly of lists (``[[-2, 1], [0, -1]]``)."""
    t = v.strip()
    if t.startswith("["):
        if not t.endswith("]"):
            raise ValueError(f"service '{text}': {name} = {t!r} is not a list closed by ']'")
        inner = t[1:-1]
        return [] if not inner.strip() else [_nested(text, name, x) for x in _split_top(text, inner)]
    try:
        x = float(Fraction(t)) if "/" in t else float(t)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"service '{text}': {name} = {t!r} is not a number") from None
    if not math.isfinite(x):
        raise ValueError(f"service '{text}': {name} = {t!r} is not allowed; a finite number is required")
    return x


def _vector(text, name, v):
    v = [v] if not isinstance(v, list) else v
    if not v or any(isinstance(x, list) for x in v):
        raise ValueError(f"service '{text}': {name} must be a nonempty list of numbers")
    return np.array(v, dtype=float)


def _check_mean(text, ph):
    if abs(ph.mean - 1.0) > HYPER_MEAN_TOL:
        raise ValueError(f"service '{text}': the mean is {ph.mean:.12g}; lbmc's laws have mean 1 (within 1e-9)")
    return ph


def _ph_law(text, params):
    """``ph:alpha=[..],T=[[..],..]`` (src/core/service.c's checks: a number is a list of one)."""
    if "alpha" not in params or "T" not in params:
        raise ValueError(f"service '{text}': ph needs the parameters alpha and T")
    alpha = _vector(text, "alpha", params["alpha"])
    T = params["T"]
    if not isinstance(T, list):
        T = [[T]]
    if not all(isinstance(row, list) and not any(isinstance(x, list) for x in row) for row in T):
        raise ValueError(f"service '{text}': T must be a list of rows of numbers")
    if len(T) != alpha.size or any(len(row) != alpha.size for row in T):
        raise ValueError(f"service '{text}': T must be {alpha.size} rows of {alpha.size} numbers (alpha has "
                         f"{alpha.size} entries)")
    if alpha.size > PH_MAX_PHASES:
        raise ValueError(f"service '{text}': {alpha.size} phases; at most {PH_MAX_PHASES} are allowed")
    try:
        ph = PhaseType(alpha, np.array(T, dtype=float))
    except ValueError as e:
        raise ValueError(f"service '{text}': {e}") from None
    return _check_mean(text, ph)


def _coxian_law(text, params):
    """``coxian:scv=C`` (the two-moment fit) or ``coxian:r=[..],p=[..]`` (phases in series)."""
    if "scv" in params:
        if "r" in params or "p" in params:
            raise ValueError(f"service '{text}': give either scv or r and p, not both")
        C = params["scv"]
        if isinstance(C, list) or not (0.5 <= C <= HYPER_SCV_MAX):
            raise ValueError(f"service '{text}': coxian:scv=C needs a number 0.5 <= C <= 1e12")
        return ph_coxian2(C)
    if "r" not in params:
        raise ValueError(f"service '{text}': coxian needs scv, or r (and p for more than one phase)")
    r = _vector(text, "r", params["r"])
    p = _vector(text, "p", params["p"]) if "p" in params and params["p"] != [] else np.zeros(0)
    if r.size > PH_MAX_PHASES:
        raise ValueError(f"service '{text}': {r.size} phases; at most {PH_MAX_PHASES} are allowed")
    if np.any(p <= 0):
        raise ValueError(f"service '{text}': the continuation probabilities p must be in (0, 1]")
    try:
        ph = ph_coxian(r, p, normalize=False)
    except ValueError as e:
        raise ValueError(f"service '{text}': {e}") from None
    return _check_mean(text, ph)


def _law_of(text, ph):
    """The :class:`ServiceLaw` of a phase-type law given as text, named by that text (so
    that two different laws never read as one)."""
    law = ServiceLaw(ph)
    law.text = text
    return law
