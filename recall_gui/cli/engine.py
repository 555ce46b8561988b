"""``--engine local|ray`` and ``--ray-address``: where a whole-table job runs (duplicates, check)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from recall_gui.core.base import InvalidInputError
from recall_gui.core.ray import ray_cluster

ENGINES = ("local", "ray")


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        default="local",
        help="where the job runs: local (default, this process) or ray (a Ray cluster; needs "
        "pip install 'recall-gui[scale]')",
    )
    parser.add_argument(
        "--ray-address",
        metavar="ADDR",
        help="the Ray cluster to run on (ray://host:10001 or a head's host:6379); without it --engine ray "
        "starts a Ray of this machine's cores on loopback and stops it at the end",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        default=None,
        help="with --engine ray: also show Ray's own log lines and warnings",
    )


def check_engine_options(args: argparse.Namespace, *ray_only: str) -> None:
    """Refuse an option typed for the Ray engine when the job runs locally (``ray_only``: the names of
    the command's own such options, as attributes of ``args``)."""
    if args.engine == "ray":
        return
    for name in ("ray_address", "verbose", *ray_only):
        if getattr(args, name, None) is not None:
            option = "--" + name.replace("_", "-")
            raise InvalidInputError(
                f"{option} is for --engine ray", hint="Add --engine ray, or leave it out."
            )


@contextmanager
def engine_for(args: argparse.Namespace) -> Iterator[Any]:
    """Ray for the block when ``--engine ray`` (started before the job opens any table), else nothing."""
    if args.engine != "ray":
        with nullcontext() as nothing:
            yield nothing
        return

    with ray_cluster(args.ray_address, verbose=bool(args.verbose)) as cluster:
        yield cluster
