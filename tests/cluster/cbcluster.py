"""A real Slurm cluster of four (or `hosts`) hosts built from network namespaces, for the slurm and cluster tests.

Each host is a network namespace joined by a veth pair to a bridge that lives in its own
namespace; nothing is configured in the root namespace. With `leaves` the network has two
levels: each host's port is on its leaf's bridge, and each leaf bridge is joined to one spine
bridge by a veth pair (its uplink), so that traffic between leaves really crosses two uplinks and
`shape_uplink` slows every pair across one. The cluster then describes its tree as Slurm's
topology.conf (TopologyPlugin=topology/tree, so `scontrol show topology` prints it) and as EC2's
describe-instance-topology JSON with its "HOST INSTANCE-ID" file. Commands run "on" a host through
nsenter + unshare with a private UTS namespace (its own hostname, which Open MPI needs) and a
private mount namespace in which /etc/hosts names the cluster's hosts. munged runs once for the
cluster (its socket is a file, reachable from every namespace); slurmctld runs on node1 and one
slurmd on every host.

Teardown kills only what the cluster started: the daemons by PID, then any process that still
lives in one of its network namespaces (job steps and ranks that slurmd forked), and deletes the
namespaces. It runs also when a test fails, and every wait is bounded.
"""

import json
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77  # CTest SKIP_RETURN_CODE of the slurm and cluster tests

REQUIRED_TOOLS = ["ip", "tc", "nsenter", "unshare", "munged", "mungekey", "slurmctld", "slurmd",
                  "sbatch", "squeue", "scontrol", "scancel", "srun", "mpirun"]


SITE_SLURM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                          "site-slurm")


def skip_reason():
    """Why this machine cannot build the cluster, or None."""
    # A cluster's own Slurm and munge are not this test's to disturb (nor do their daemons and
    # keys belong to it): scripts/setup installed no Slurm here, and these tests stay out.
    site = subprocess.run([SITE_SLURM], capture_output=True, text=True)
    if site.returncode == 0:
        return f"a Slurm is already configured on this machine ({site.stdout.strip()})"
    if os.geteuid() != 0:
        return "needs root (network namespaces, munge and Slurm daemons)"
    missing = [t for t in REQUIRED_TOOLS if shutil.which(t) is None]
    if missing:
        return "missing programs: " + " ".join(missing) + " (run scripts/setup test)"
    probe = f"cbprobe{secrets.token_hex(3)}"
    r = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if r.returncode != 0:
        return "cannot create network namespaces: " + r.stderr.strip()
    subprocess.run(["ip", "netns", "delete", probe], capture_output=True)
    return None


def _run(argv, timeout=30, check=True, **kw):
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({r.returncode}): {r.stderr.strip()}")
    return r


class Cluster:
    """Use as a context manager: `with Cluster(hosts=4) as c: c.on(1, ["sinfo"])`."""

    SUBNET = "10.77.0"
    # Everything that runs on the hosts (daemons, jobs, ranks) runs at a higher priority than the
    # rest of the machine: the hosts' healthy pairs stand in for a network, and a network does
    # not slow down when another program computes. Without it, the tests beside the cluster's
    # on a 2-core machine made a healthy 256 KiB all_reduce take 50 ms, 12 times its time at the
    # cap, and a planted fault of 25 times shrank to 3. The hosts' ranks yield while they wait,
    # so the rest still runs.
    NICENESS = -10

    def __init__(self, hosts=4, cpus=2, partitions=None, node_weights=None, gres_line=None,
                 site_files=None, hidden_dirs=None, leaves=None):
        self.nhosts = hosts
        # Hosts per leaf switch, in host order (e.g. (3, 3, 2)); None: one flat bridge.
        if leaves is not None and sum(leaves) != hosts:
            raise ValueError(f"leaves {leaves} hold {sum(leaves)} hosts, not {hosts}")
        self.leaves = list(leaves) if leaves else None
        # Hosts set up unlike the others, as real clusters drift: host (1-based) -> {name: text}
        # of files that appear in that host's /etc (an overlay, e.g. {"nccl.conf": "..."}), and
        # host -> directories that are empty on that host (e.g. where a library lives).
        self.site_files = site_files or {}
        self.hidden_dirs = hidden_dirs or {}
        self.cpus = cpus
        self.prefix = f"cb{secrets.token_hex(3)}"
        self.names = [f"node{i}" for i in range(1, hosts + 1)]
        # Extra partitions, name -> node list expression; "all" (every host) is the default.
        self.partitions = partitions or {}
        self.node_weights = node_weights or {}
        # Two countable "GPUs" per host so that --gpus-per-node works as on a GPU cluster (Slurm
        # sets SLURM_GPUS_PER_NODE and CUDA_VISIBLE_DEVICES). Slurm drops GPUs without device
        # files; /dev/null and /dev/zero stand in, and nothing opens them (task/none, no cgroups).
        self.gres_line = gres_line if gres_line is not None else "Name=gpu File=/dev/null,/dev/zero"
        self.dir = tempfile.mkdtemp(prefix=f"collbench-{self.prefix}-")
        os.chmod(self.dir, 0o755)
        self.conf = os.path.join(self.dir, "slurm.conf")
        # The tree in Slurm's words (read beside slurm.conf) and EC2's, when there are leaves.
        self.topology_conf = os.path.join(self.dir, "topology.conf")
        self.ec2_topology = os.path.join(self.dir, "ec2-topology.json")
        self.instance_hosts = os.path.join(self.dir, "instance-hosts.txt")
        self.hosts_file = os.path.join(self.dir, "hosts")
        self.netns = []
        self.daemons = []  # (name, Popen)
        self.env = dict(os.environ)
        self.env["SLURM_CONF"] = self.conf
        self.env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        self.env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
        # Every "host" claims 2 CPUs but all share the machine's few cores: ranks must yield
        # while they wait instead of spinning through their time slice.
        self.env["OMPI_MCA_mpi_yield_when_idle"] = "1"
        self.ns_inodes = set()
        self.daemon_flags = []

    # --- lifecycle -------------------------------------------------------------------------
    def __enter__(self):
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def ns(self, i):
        return f"{self.prefix}h{i}"

    def _start(self):
        t0 = time.monotonic()
        for host, files in self.site_files.items():
            etc = self._site_etc(host)
            os.makedirs(etc, exist_ok=True)
            for name, text in files.items():
                with open(os.path.join(etc, name), "w") as f:
                    f.write(text)
        self._network()
        self._munge()
        self._slurm()
        self.log(f"cluster {self.prefix} up in {time.monotonic() - t0:.1f} s ({self.dir})")

    def leaf_of(self, host):
        """The leaf (1-based) host (1-based) hangs from; 1 without leaves."""
        if not self.leaves:
            return 1
        first = 1
        for k, count in enumerate(self.leaves, start=1):
            if host < first + count:
                return k
            first += count
        raise ValueError(f"no host {host}")

    def _bridge(self, br, name):
        _run(["ip", "-n", br, "link", "add", name, "type", "bridge"])
        _run(["ip", "-n", br, "link", "set", name, "up"])

    def _network(self):
        br = f"{self.prefix}br"
        _run(["ip", "netns", "add", br])
        self.netns.append(br)
        _run(["ip", "-n", br, "link", "set", "lo", "up"])
        if self.leaves:
            # Leaf bridges and the spine, all in the bridge namespace: leaf k's uplink is the
            # veth pair u<k> (on the leaf) - d<k> (on the spine).
            self._bridge(br, "spine")
            for k in range(1, len(self.leaves) + 1):
                self._bridge(br, f"leaf{k}")
                _run(["ip", "-n", br, "link", "add", f"u{k}", "type", "veth", "peer", "name", f"d{k}"])
                _run(["ip", "-n", br, "link", "set", f"u{k}", "master", f"leaf{k}"])
                _run(["ip", "-n", br, "link", "set", f"d{k}", "master", "spine"])
                _run(["ip", "-n", br, "link", "set", f"u{k}", "up"])
                _run(["ip", "-n", br, "link", "set", f"d{k}", "up"])
            self._write_topology()
        else:
            self._bridge(br, "br0")
        lines = ["127.0.0.1 localhost"]
        for i in range(1, self.nhosts + 1):
            ns = self.ns(i)
            _run(["ip", "netns", "add", ns])
            self.netns.append(ns)
            _run(["ip", "-n", br, "link", "add", f"p{i}", "type", "veth", "peer", "name", "eth0",
                  "netns", ns])
            master = f"leaf{self.leaf_of(i)}" if self.leaves else "br0"
            _run(["ip", "-n", br, "link", "set", f"p{i}", "master", master])
            _run(["ip", "-n", br, "link", "set", f"p{i}", "up"])
            _run(["ip", "-n", ns, "addr", "add", f"{self.SUBNET}.{i}/24", "dev", "eth0"])
            _run(["ip", "-n", ns, "link", "set", "eth0", "up"])
            _run(["ip", "-n", ns, "link", "set", "lo", "up"])
            lines.append(f"{self.SUBNET}.{i} node{i}")
        for ns in self.netns:
            self.ns_inodes.add(os.stat(f"/run/netns/{ns}").st_ino)
        with open(self.hosts_file, "w") as f:
            f.write("\n".join(lines) + "\n")

    def _write_topology(self):
        """topology.conf, the EC2 JSON (three levels: a top node, the spine, the host's leaf)
        and the instance ids' hosts, for the hosts of each leaf."""
        conf = []
        instances = []
        pairs = []
        first = 1
        for k, count in enumerate(self.leaves, start=1):
            last = first + count - 1
            conf.append(f"SwitchName=leaf{k} Nodes=node[{first}-{last}]")
            for i in range(first, last + 1):
                instance = f"i-{i:017x}"
                instances.append({"InstanceId": instance, "InstanceType": "p5.48xlarge",
                                  "NetworkNodes": ["top", "spine", f"leaf{k}"],
                                  "AvailabilityZone": "us-east-2b", "ZoneId": "use2-az2"})
                pairs.append(f"node{i} {instance}")
            first = last + 1
        conf.append(f"SwitchName=spine Switches=leaf[1-{len(self.leaves)}]")
        with open(self.topology_conf, "w") as f:
            f.write("\n".join(conf) + "\n")
        with open(self.ec2_topology, "w") as f:
            json.dump({"Instances": instances}, f, indent=2)
        with open(self.instance_hosts, "w") as f:
            f.write("\n".join(pairs) + "\n")

    def _munge(self):
        d = os.path.join(self.dir, "munge")
        os.makedirs(d, mode=0o755)
        key = os.path.join(d, "munge.key")
        _run(["mungekey", "--create", f"--keyfile={key}"])
        os.chmod(key, 0o600)
        self.munge_socket = os.path.join(d, "munge.socket.2")
        p = subprocess.Popen(["nice", "-n", str(self.NICENESS), "munged", "--foreground", f"--socket={self.munge_socket}",
                              f"--key-file={key}", f"--pid-file={d}/munged.pid",
                              f"--log-file={d}/munged.log", f"--seed-file={d}/munged.seed",
                              "--force"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
        self.daemons.append(("munged", p))
        self._wait(lambda: os.path.exists(self.munge_socket), 10, "munged socket")

    def _slurm(self):
        d = self.dir
        for sub in ["ctld", "spool", "tmp", "log"]:
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        for n in self.names:
            os.makedirs(os.path.join(d, "spool", n), exist_ok=True)
            os.makedirs(os.path.join(d, "tmp", n), exist_ok=True)
        nodes = f"node[1-{self.nhosts}]"
        node_lines = []
        for n in self.names:
            w = self.node_weights.get(n, 1)
            node_lines.append(f"NodeName={n} CPUs={self.cpus} RealMemory=2000 Weight={w} "
                              "Gres=gpu:2 State=UNKNOWN")
        parts = [f"PartitionName=all Nodes={nodes} Default=YES MaxTime=INFINITE State=UP"]
        for name, expr in self.partitions.items():
            parts.append(f"PartitionName={name} Nodes={expr} MaxTime=INFINITE State=UP")
        conf = f"""ClusterName={self.prefix}
SlurmctldHost=node1
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={self.munge_socket}
SlurmUser=root
SlurmdUser=root
StateSaveLocation={d}/ctld
SlurmctldPidFile={d}/slurmctld.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdSpoolDir={d}/spool/%n
SlurmdPidFile={d}/slurmd-%n.pid
SlurmdLogFile={d}/log/slurmd-%n.log
TmpFS={d}/tmp/%n
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=pmix
SchedulerParameters=sched_interval=1
ReturnToService=2
SlurmdParameters=config_overrides
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc={d}/jobcomp.txt
KillWait=2
GresTypes=gpu
MessageTimeout=10
InactiveLimit=0
{"TopologyPlugin=topology/tree" if self.leaves else ""}
{chr(10).join(node_lines)}
{chr(10).join(parts)}
"""
        with open(self.conf, "w") as f:
            f.write(conf)
        with open(os.path.join(d, "gres.conf"), "w") as f:
            f.write(f"NodeName=node[1-{self.nhosts}] {self.gres_line}\n")
        ctld = self.popen_on(1, ["slurmctld", "-D", "-i"] + self.daemon_flags, log="slurmctld.out")
        self.daemons.append(("slurmctld", ctld))
        self._wait(lambda: self.on(1, ["scontrol", "ping"], check=False).returncode == 0, 20,
                   "slurmctld to answer")
        for i, n in enumerate(self.names, start=1):
            p = self.popen_on(i, ["slurmd", "-D", "-N", n] + self.daemon_flags, log=f"slurmd-{n}.out")
            self.daemons.append((f"slurmd {n}", p))

        def all_idle():
            r = self.on(1, ["sinfo", "-h", "-N", "-p", "all", "-o", "%N %t"], check=False)
            states = [l.split()[1] for l in r.stdout.splitlines() if l.strip()]
            return len(states) == self.nhosts and all(s == "idle" for s in states)

        self._wait(all_idle, 30, "every slurmd to register idle")

    def stop(self):
        """Tears everything down; safe to call twice and after a failed start."""
        # Jobs first, so that their steps are not left orphaned by the daemons' death.
        if any(name == "slurmctld" and p.poll() is None for name, p in self.daemons):
            r = self.on(1, ["squeue", "-h", "-o", "%A"], check=False, timeout=10)
            ids = r.stdout.split()
            if ids:
                self.on(1, ["scancel", "--full"] + ids, check=False, timeout=10)
        for name, p in reversed(self.daemons):
            if p.poll() is None:
                try:
                    os.kill(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.log(f"{name} (pid {p.pid}) did not exit after SIGKILL")
        self.daemons = []
        self._kill_namespace_processes()
        for ns in reversed(self.netns):
            subprocess.run(["ip", "netns", "delete", ns], capture_output=True)
        self.netns = []
        # A deleted namespace's inode number goes to the next namespace made, maybe another
        # test's cluster: a second stop() must not kill what lives there.
        self.ns_inodes = set()
        if os.environ.get("COLLBENCH_KEEP_CLUSTER"):
            self.log(f"kept {self.dir} (COLLBENCH_KEEP_CLUSTER is set)")
        else:
            shutil.rmtree(self.dir, ignore_errors=True)

    def _kill_namespace_processes(self):
        """Job steps, ranks and scripts that slurmd forked still live in the hosts' namespaces."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            left = []
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    if os.stat(f"/proc/{pid}/ns/net").st_ino in self.ns_inodes:
                        left.append(int(pid))
                except OSError:
                    continue
            if not left:
                return
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.1)
        self.log("processes still alive in the cluster's namespaces after 10 s")

    # --- running things on hosts -----------------------------------------------------------
    def _site_etc(self, host):
        return os.path.join(self.dir, f"etc-node{host}")

    def _wrap(self, host, argv):
        # In the host's private mount namespace: its own /etc files (a read-only overlay whose
        # upper layer holds them), its hidden directories (an empty tmpfs over each), /etc/hosts.
        setup = []
        if host in self.site_files:
            setup.append(f"mount -t overlay overlay -o lowerdir={shlex.quote(self._site_etc(host))}:/etc /etc")
        for d in self.hidden_dirs.get(host, []):
            setup.append(f"mount -t tmpfs -o size=1m tmpfs {shlex.quote(d)}")
        prepare = f"{{ {' && '.join(setup)}; }} || exit 97; " if setup else ""
        script = ('hostname "$0"; ' + prepare + 'mount --bind "$1" /etc/hosts; shift; exec "$@"')
        return (["nice", "-n", str(self.NICENESS), "nsenter", f"--net=/run/netns/{self.ns(host)}",
                 "unshare", "--uts", "--mount", "--propagation", "private", "sh", "-c", script,
                 f"node{host}", self.hosts_file] + list(argv))

    def on(self, host, argv, env=None, check=True, timeout=60, cwd=None, input=None):
        """Runs argv on host (1-based) and returns the CompletedProcess (text)."""
        e = dict(self.env)
        if env:
            e.update(env)
        r = subprocess.run(self._wrap(host, argv), capture_output=True, text=True, env=e,
                           timeout=timeout, cwd=cwd, input=input)
        if check and r.returncode != 0:
            raise RuntimeError(f"on node{host}: {' '.join(argv)} exited {r.returncode}\n"
                               f"stdout: {r.stdout}\nstderr: {r.stderr}")
        return r

    def popen_on(self, host, argv, env=None, log=None, **kw):
        """Starts argv on host in the background; its output goes to log/<log> (or nowhere)."""
        e = dict(self.env)
        if env:
            e.update(env)
        out = open(os.path.join(self.dir, "log", log), "w") if log else subprocess.DEVNULL
        try:
            return subprocess.Popen(self._wrap(host, argv), env=e, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True, **kw)
        finally:
            if log:
                out.close()  # the child has its own descriptor

    # --- shaping -----------------------------------------------------------------------------
    def shape(self, host, rate="100mbit"):
        """Limits host's link to `rate` on both ends (its eth0 and its bridge port)."""
        for ns, dev in [(self.ns(host), "eth0"), (f"{self.prefix}br", f"p{host}")]:
            _run(["nsenter", f"--net=/run/netns/{ns}", "tc", "qdisc", "add", "dev", dev, "root", "tbf",
                  "rate", rate, "burst", "64kb", "latency", "50ms"])

    def shape_uplink(self, leaf, rate):
        """Limits leaf's uplink to `rate` both ways: every pair with one host on that leaf and
        one elsewhere shares it, and pairs within the leaf do not touch it."""
        for dev in (f"u{leaf}", f"d{leaf}"):
            _run(["nsenter", f"--net=/run/netns/{self.prefix}br", "tc", "qdisc", "add", "dev", dev,
                  "root", "tbf", "rate", rate, "burst", "64kb", "latency", "50ms"])

    def shape_link(self, a, b, rate="100mbit"):
        """Limits only the traffic between hosts a and b, both directions, to `rate`: on each
        one's eth0 an htb qdisc whose one class (at `rate`) only a u32 filter on the other
        host's address feeds. htb sends unclassified packets on directly (default 0), so every
        other flow keeps the full link. (htb and tbf are the shapers every test kernel has;
        prio, for one, may be missing.)"""
        for here, there in ((a, b), (b, a)):
            tc = ["nsenter", f"--net=/run/netns/{self.ns(here)}", "tc"]
            _run(tc + ["qdisc", "add", "dev", "eth0", "root", "handle", "1:", "htb"])
            _run(tc + ["class", "add", "dev", "eth0", "parent", "1:", "classid", "1:4", "htb",
                       "rate", rate, "ceil", rate, "burst", "64kb", "quantum", "1514"])
            _run(tc + ["filter", "add", "dev", "eth0", "parent", "1:", "protocol", "ip", "prio",
                       "1", "u32", "match", "ip", "dst", f"{self.SUBNET}.{there}/32", "flowid",
                       "1:4"])

    # --- helpers -----------------------------------------------------------------------------
    def logs(self):
        """The daemons' logs, for a failing test's message."""
        out = []
        for root, _, files in os.walk(os.path.join(self.dir, "log")):
            for f in sorted(files):
                with open(os.path.join(root, f), errors="replace") as fh:
                    text = fh.read()[-3000:]
                out.append(f"--- {f}\n{text}")
        return "\n".join(out)

    @staticmethod
    def log(msg):
        print(f"[cluster] {msg}", file=sys.stderr, flush=True)

    @staticmethod
    def _wait(pred, timeout, what):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if pred():
                return
            time.sleep(0.1)
        raise TimeoutError(f"timed out after {timeout} s waiting for {what}")

    def wait_jobs_done(self, timeout=120):
        """Waits until the controller has no pending or running job."""
        def empty():
            r = self.on(1, ["squeue", "-h", "-o", "%i"], check=False)
            return r.returncode == 0 and not r.stdout.strip()
        self._wait(empty, timeout, "every job to finish")


if __name__ == "__main__":
    # A smoke check: python3 cbcluster.py  (builds the cluster, runs a 2-node job, tears down).
    why = skip_reason()
    if why:
        print(f"skipped: {why}")
        sys.exit(SKIP)
    with Cluster() as c:
        t = time.monotonic()
        r = c.on(1, ["srun", "-N", "4", "--ntasks-per-node=2", "--mpi=pmix", "hostname"])
        print(sorted(r.stdout.split()), f"{time.monotonic() - t:.1f} s")
