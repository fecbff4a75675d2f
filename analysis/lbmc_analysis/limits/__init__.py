"""Limits of lbmc's models as n -> infinity (and their 1/n corrections), one implementation each.

* :func:`reference` / :func:`refined` / :func:`to_json`: every metric of a point, with
  source and accuracy (:mod:`.reference`, :mod:`.refined_point`, the shared point and result in
  :mod:`._result`); ``python3 -m lbmc_analysis limit --json``;
* :func:`cavity_jsq`: JSQ(d) / balanced(c) with phase-type service, the queue at the
  cavity (Bramson, Lu & Prabhakar 2010, 2012) (:mod:`.cavity`);
* :func:`lwl_fixed_point`: LL(d) for any service law (Hellemans & Van Houdt 2018) (:mod:`.lwl`);
* :mod:`.pairs`: n x the pair statistics as n -> infinity (the occupancy's stationary covariance);
* :class:`OccupancyModel`, :func:`transient`, :func:`fixed_point`: the mean-field ODE with
  the C side's drift (:mod:`.ode`);
* :func:`refined_stationary`, :func:`refined_transient`: refined mean field (Gast & Van
  Houdt 2017; Gast, Bortolussi & Tribastone 2019) (:mod:`.refined_mf`);
* :class:`OccupancyChain`: exact finite-n occupancy chains (:mod:`.exact`);
* :mod:`.heavy`: heavy traffic with a fixed number of servers (Chen & Ye 2012);
* :mod:`.service`: lbmc's service laws and phase-type helpers.

docs/limits.md lists each limit, its source, assumptions, accuracy and where it does not
apply. The exponential closed forms stay in :mod:`lbmc_analysis.meanfield` and are reused.
"""

from .cavity import cavity_jsq, necessary_stability
from .exact import OccupancyChain
from .lwl import lwl_exponential_F, lwl_fixed_point, lwl_mean_wait_finite
from .ode import OccupancyModel, fixed_point, parse_tail_start, transient
from ._result import METRICS, normalize_point, to_json
from .reference import reference, reference_for_point
from .refined_point import refined, transient_for_point
from .refined_mf import refined_stationary, refined_transient
from .service import (PhaseType, ServiceLaw, parse_service, ph_coxian, ph_coxian2, ph_erlang, ph_exponential,
                      ph_hyperexponential)

__all__ = [
    "METRICS", "OccupancyChain", "OccupancyModel", "PhaseType", "ServiceLaw", "cavity_jsq", "fixed_point",
    "lwl_exponential_F", "lwl_fixed_point", "lwl_mean_wait_finite", "necessary_stability", "normalize_point",
    "parse_service", "parse_tail_start", "ph_coxian", "ph_coxian2", "ph_erlang", "ph_exponential",
    "ph_hyperexponential", "reference", "refined", "refined_stationary", "refined_transient", "to_json",
    "transient", "transient_for_point", "reference_for_point",
]
