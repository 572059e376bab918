# shellcheck shell=bash
# What every AWS EFA instance type shares; sourced by aws-p5.sh, aws-p4d.sh and aws-g5.sh (not a
# site of its own).

# The EFA installer's libfabric and the aws-ofi-nccl plugin (DLAMI and ParallelCluster paths;
# older plugin installs live in /opt/aws-ofi-nccl). Prepended so that they win over copies in a
# CUDA or conda tree.
for _collbench_dir in /opt/amazon/efa/lib /opt/amazon/ofi-nccl/lib /opt/amazon/ofi-nccl/lib64 /opt/aws-ofi-nccl/lib; do
  if [[ -d $_collbench_dir ]]; then LD_LIBRARY_PATH=$_collbench_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
done
unset _collbench_dir
export LD_LIBRARY_PATH

# The EFA installer's Open MPI (mpirun for COLLBENCH_LAUNCHER=mpirun and the MPI backend, which
# reaches EFA through pml cm / mtl ofi).
if [[ -d /opt/amazon/openmpi/bin ]]; then export PATH=/opt/amazon/openmpi/bin:$PATH; fi

# NCCL's warnings (a fallback to sockets, a plugin that failed to load) in the job output;
# INFO is too verbose for a sweep. A value already in the environment is kept.
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
