"""The names of :mod:`recall_gui.core.ray` (its face), for type checkers and for ``lazy_loader``:
each is loaded from its module on first use. A front end's new name is one line here."""

from .check_tasks import run_checks_in_ray as run_checks_in_ray, run_checks_on_ray as run_checks_on_ray
from .cluster import (
    ScaleUnavailableError as ScaleUnavailableError,
    ray_cluster as ray_cluster,
    window_address as window_address,
)
from .duplicate_engine import RayEngine as RayEngine, find_duplicates_in_ray as find_duplicates_in_ray
from .reach_ranking import (
    RAY_PART_QUERIES as RAY_PART_QUERIES,
    find_reach_in_ray as find_reach_in_ray,
    rank_queries_on_ray as rank_queries_on_ray,
)
