"""A real two-node Ray cluster on this machine for tests: `ray start` processes the test owns.

    cluster = RayCluster.start(head_env={...}, node_env={...}, node_resources={"llmbox": 4})
    cluster.address          # 127.0.0.1:<gcs port>, for --ray-address (client_address: ray://…)
    cluster.kill_a_worker()  # kill -9 one worker process running an evaluation cell
    cluster.stop_node()      # the second node leaves (its processes get SIGTERM)
    cluster.start_node()     # … and joins again
    cluster.close()          # kill every process this cluster started (never `ray stop`)

Each `ray start` runs in a new session, so everything it launches (GCS, raylet, agents)
shares its process group, and the workers are the raylet's children; stopping a node is
killing that group and those children. The head gets a
private `--temp-dir` (short: Unix socket paths are limited to 107 bytes) and free ports for
everything it listens on, so it never meets another cluster on the machine.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
START_TIMEOUT_S = 240  # ray start on a loaded 2-core machine


def require_ray() -> None:
    """Skip with the reason when Ray is not installed; under CI (`CI` set) fail instead."""
    try:
        import ray  # noqa: F401
    except ImportError:
        reason = "Ray is not installed (pip install 'llmspace[ray]', or `make test` which installs the dev extras)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)


def free_port() -> int:
    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ports(*names: str) -> list[str]:
    out: list[str] = []
    for name in names:
        out += [f"--{name}", str(free_port())]
    return out


def _processes() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, process group) of every process."""
    out: dict[int, tuple[int, int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        out[int(entry.name)] = (int(fields[1]), int(fields[2]))
    return out


def _pgroup_pids(pgid: int) -> list[int]:
    """The processes of group `pgid` and their descendants (Ray puts each worker in a group of its own)."""
    procs = _processes()
    found = {pid for pid, (_ppid, group) in procs.items() if group == pgid}
    grew = True
    while grew:
        more = {pid for pid, (ppid, _g) in procs.items() if ppid in found and pid not in found}
        found |= more
        grew = bool(more)
    return sorted(found)


def _cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


@dataclass
class RayCluster:
    temp_dir: Path
    port: int
    dashboard_port: int
    head_env: dict[str, str]
    node_env: dict[str, str]
    node_resources: dict[str, float]
    client_port: int = 0
    groups: dict[str, int] = field(default_factory=dict)  # "head" / "node" -> process group id

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def client_address(self) -> str:
        return f"ray://127.0.0.1:{self.client_port}"

    @property
    def api_server(self) -> str:
        return f"http://127.0.0.1:{self.dashboard_port}"

    @classmethod
    def start(cls, head_env: dict[str, str], node_env: dict[str, str], node_resources: dict[str, float], *,
              head_cpus: int = 2, second_node: bool = True, dashboard: bool = True) -> RayCluster:
        """`dashboard`: the head's API server with the state API behind `ray list` (Ray loads it
        only with the dashboard: `--include-dashboard=false` leaves `ray list` without a server)."""
        temp = Path(tempfile.mkdtemp(prefix="lsray", dir="/tmp"))
        cluster = cls(temp, free_port(), free_port(), head_env, node_env, node_resources, free_port())
        try:
            cluster._ray_start("head", ["--head", "--port", str(cluster.port), "--num-cpus", str(head_cpus),
                                        f"--include-dashboard={str(dashboard).lower()}", "--dashboard-host", "127.0.0.1",
                                        "--dashboard-port", str(cluster.dashboard_port),
                                        "--temp-dir", str(temp), "--ray-client-server-port", str(cluster.client_port)], head_env)
            if second_node:
                cluster.start_node()
        except BaseException:
            cluster.close()
            raise
        return cluster

    def _ray_start(self, name: str, args: list[str], env: dict[str, str]) -> None:
        cmd = [str(BIN / "ray"), "start", *args, "--object-store-memory", "200000000", "--disable-usage-stats",
               "--node-ip-address", "127.0.0.1",
               *_ports("dashboard-agent-listen-port", "dashboard-agent-grpc-port", "metrics-export-port",
                       "runtime-env-agent-port", "node-manager-port", "object-manager-port")]
        full_env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", **env}
        proc = subprocess.Popen(cmd, env=full_env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
        self.groups[name] = proc.pid
        out, _ = proc.communicate(timeout=START_TIMEOUT_S)
        if proc.returncode != 0:
            raise RuntimeError(f"ray start ({name}) failed with {proc.returncode}:\n{out[-3000:]}")

    def start_node(self) -> None:
        self._ray_start("node", ["--address", self.address, "--num-cpus", "1",
                                 "--resources", json.dumps(self.node_resources)], self.node_env)
        self.wait_nodes(2)

    def alive_nodes(self) -> int:
        out = subprocess.run([str(BIN / "python"), "-c", _COUNT_NODES, self.address], capture_output=True, text=True,
                             timeout=120, env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"})
        return int(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 and out.stdout.strip() else -1

    def wait_nodes(self, n: int, bound: float = 180) -> None:
        deadline = time.monotonic() + bound
        while (seen := self.alive_nodes()) != n:
            assert time.monotonic() < deadline, f"the cluster has {seen} live nodes, not {n}"

    def pids(self, name: str | None = None) -> list[int]:
        groups = [self.groups[name]] if name else list(self.groups.values())
        return [pid for g in groups for pid in _pgroup_pids(g)]

    def cell_workers(self, name: str | None = None) -> list[int]:
        """Worker processes running an evaluation cell now (Ray titles them after the task: `ray::eval cell …`)."""
        return [pid for pid in self.pids(name) if _cmdline(pid).startswith("ray::eval cell")]

    def kill_a_worker(self, bound: float = 120) -> int:
        deadline = time.monotonic() + bound
        while not (workers := self.cell_workers()):
            assert time.monotonic() < deadline, "no worker ran a cell"
            time.sleep(0.02)  # polling the process table: there is no event to wait on
        os.kill(workers[0], signal.SIGKILL)
        return workers[0]

    def stop_node(self) -> None:
        """The second node leaves: SIGTERM to its processes (as `ray stop` on that machine would)."""
        group = self.groups.pop("node")
        self._kill_group(group, signal.SIGTERM, grace=20)

    def _kill_group(self, group: int, sig: int, grace: float) -> None:
        self._signal(_pgroup_pids(group), sig)
        deadline = time.monotonic() + grace
        while _pgroup_pids(group) and time.monotonic() < deadline:
            time.sleep(0.1)  # polling the process table until they are gone
        self._signal(_pgroup_pids(group), signal.SIGKILL)

    @staticmethod
    def _signal(pids: list[int], sig: int) -> None:
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass

    def logs_text(self) -> Iterator[tuple[Path, bytes]]:
        for path in self.temp_dir.rglob("*"):
            if path.is_file() and not path.is_symlink():
                try:
                    yield path, path.read_bytes()
                except OSError:
                    continue

    def close(self) -> None:
        for name in ("node", "head"):
            group = self.groups.pop(name, None)
            if group is not None:
                self._kill_group(group, signal.SIGKILL, grace=10)


_COUNT_NODES = """
import sys, logging, ray
ray.init(address=sys.argv[1], logging_level=logging.ERROR, log_to_driver=False)
print(sum(1 for n in ray.nodes() if n["Alive"]))
"""
