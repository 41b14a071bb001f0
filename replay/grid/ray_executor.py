"""Many machines: each cell is a Ray task (`stratune grid --ray auto`).

Ray retries a task whose node was lost (max_retries); the retry resumes the cell from its cache
like any rerun, after freeing the connection slots the lost attempt held. The endpoint limits,
the cost cap and the progress board are actors (ray_actors.py). Run directories live on a path
every node sees, or travel with the cell (`--ship`, ship.py).
"""

from __future__ import annotations

import platform
import shutil
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llm_cache.gates import ByRole, CallGate, GateChain
from llm_cache.records import Role
from replay.grid import ray_actors, ray_connect, ray_credentials
from replay.grid import ship as shipping
from replay.grid.cells import Cell
from replay.grid.execute import CellEnv, CellStatus, run_cell
from replay.grid.limits import GridLimits, endpoint_of, limit_name
from replay.grid.live import Board
from replay.stops.control import STOP_FILE, StopControl
from stratune_core.records.errors import ConfigError

MAX_RETRIES = 3


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError("--ray needs Ray on this machine and every node: "
                          "pip install -e '.[ray]'") from None
    return ray


def ray_cell(cell: Cell, root: Path, env: CellEnv, shared: dict[str, Any], token: str,
             payload: bytes | None) -> tuple[CellStatus, bytes | None]:
    """The body of a cell's Ray task, on whichever node Ray chose."""
    import ray

    visible = shipping.sees_grid(root, token)
    if payload is None and not visible:
        return CellStatus(id=cell.id, state="failed", message=(
            f"{root} is not visible on node {platform.node()}; put the grid directory on a "
            "filesystem every node sees, or run with --ship")), None
    if payload is not None:
        shipping.unpack(root, payload, replace=() if visible else (cell.id,))
    limits: dict[str, Any] = shared["limits"]
    for actor in limits.values():  # a retried task: free what the lost attempt held
        ray.get(actor.release_holder.remote(cell.id))
    board = shared["board"]
    stop = StopControl([root / STOP_FILE] if visible else [], deadline=shared["deadline"],
                       timeout_text=shared["timeout"],
                       external=lambda: ray.get(board.stop_reason.remote()))
    gates: list[CallGate] = [stop]
    if shared["cost"] is not None:
        gates.append(ray_actors.RemoteCost(shared["cost"]))
    by_role = {}
    for role in (Role.TARGET, Role.OPTIMIZER):
        name = limit_name(endpoint_of(cell.options, role), limits)
        if name is not None:
            by_role[role] = ray_actors.RemoteLimit(limits[name], cell.id)
    if by_role:
        gates.append(ByRole(by_role))
    tracker = None
    if shared["mlflow"] is not None:
        from replay.tracking.mlflow_runs import MlflowSink, RunTracker

        tracker = RunTracker(MlflowSink(*shared["mlflow"]), cell.path(root), run_name=cell.id,
                             tags={f"grid.{k}": str(v) for k, v in cell.coordinates().items()})
    status = run_cell(cell, root, env, gate=GateChain(gates), observers=(stop,),
                      reporter=ray_actors.RemoteBoard(board), tracker=tracker)
    if payload is None:
        return status, None
    archive = shipping.pack(root, [cell.id])
    if not visible:
        shutil.rmtree(cell.path(root), ignore_errors=True)
    return status, archive


class RayExecutor:
    def __init__(self, root: Path, env: CellEnv, limits: GridLimits, board: Board, *,
                 address: str | None, cpus: float, ship: bool,
                 mlflow: tuple[str, str] | None, cells: Sequence[Cell] = (),
                 pass_env: bool = False) -> None:
        ray = self.ray = _ray()
        # Models built from their specs read credentials from the worker's environment.
        needs = ray_credentials.needs_of(
            model for cell in cells if env.backends(cell) is None
            for model in (cell.options.target_model, cell.options.optimizer_model))
        # Only in memory (Ray's runtime_env), never in the grid directory.
        runtime_env = {"env_vars": ray_credentials.passed_env(needs)} if pass_env else None
        self.started_ray = not ray.is_initialized()
        if self.started_ray:
            ray_connect.join(ray, address)
        try:
            ray_credentials.check_workers(ray, needs, runtime_env)
        except ConfigError:
            if self.started_ray:
                ray.shutdown()
            raise
        self.root, self.env, self.board, self.ship = root, env, board, ship
        self.local_stop = limits.stop
        self.token = uuid.uuid4().hex
        shipping.write_marker(root, self.token)
        limit_actor = ray.remote(ray_actors.LimitActor)
        self.limits = {name: limit_actor.remote(gate.limit, name)
                       for name, gate in limits.limits.items()}
        self.cost = None
        if limits.cost is not None:
            self.cost = ray.remote(ray_actors.CostActor).remote(
                limits.cost.cap, limits.cost.paid, limits.cost.hint)
        self.board_actor = ray.remote(ray_actors.BoardActor).remote()
        self.shared = {"limits": self.limits, "cost": self.cost, "board": self.board_actor,
                       "deadline": limits.stop.deadline, "timeout": limits.stop.timeout_text,
                       "mlflow": mlflow}
        self.task = ray.remote(ray_cell).options(num_cpus=cpus, max_retries=MAX_RETRIES,
                                                 **({"runtime_env": runtime_env}
                                                    if runtime_env else {}))

    def submit(self, cell: Cell) -> Any:
        payload = None
        if self.ship:
            payload = ship_payload(self.root, cell)
        return self.task.remote(cell, self.root, self.env, self.shared, self.token, payload)

    def wait(self, handles: Sequence[Any], timeout: float) -> list[Any]:
        done, _ = self.ray.wait(list(handles), num_returns=len(handles), timeout=timeout)
        for status in self.ray.get(self.board_actor.snapshot.remote()):
            if status.state == "running":
                self.board.report(status)
        return done

    def result(self, handle: Any, cell: Cell) -> CellStatus:
        ray = self.ray
        try:
            status, archive = ray.get(handle)
        except ray.exceptions.TaskCancelledError:
            return CellStatus(id=cell.id, state="stopped", message="interrupted; rerun the grid "
                              "to continue")
        except ray.exceptions.RayError as exc:
            first = str(exc).strip().splitlines()
            return CellStatus(id=cell.id, state="failed",
                              message=f"{type(exc).__name__}: {first[-1] if first else ''}")
        if archive is not None:
            shipping.unpack(self.root, archive, replace=(cell.id,))
        return status

    def interrupt(self, handles: Sequence[Any]) -> None:
        self.board_actor.set_stop.remote("interrupted")
        for handle in handles:
            self.ray.cancel(handle)

    def stop_reason(self) -> str | None:
        stop = self.local_stop
        reason = None
        if (self.root / STOP_FILE).exists():
            reason = f"{self.root / STOP_FILE} exists"
        elif stop.deadline is not None and stop.timed_out():
            reason = f"--timeout {stop.timeout_text}"
        elif self.cost is not None and self.ray.get(self.cost.exhausted.remote()):
            reason = "--max-cost reached"
        if reason is not None:
            self.board_actor.set_stop.remote(reason)  # for nodes that cannot see DIR/STOP
        return reason

    def close(self) -> None:
        for actor in (*self.limits.values(), self.cost, self.board_actor):
            if actor is not None:
                self.ray.kill(actor)
        if self.started_ray:
            self.ray.shutdown()


def ship_payload(root: Path, cell: Cell) -> bytes:
    """The cell's directory (to resume it) and, for a replay cell, its source's."""
    parts = [cell.id] + ([cell.depends_on] if cell.depends_on else [])
    return shipping.pack(root, parts)
