# shellcheck shell=bash
# Site environment: every transport over TCP. The baseline to compare a fabric against, and the
# setting for clusters without one (the test cluster of tests/cluster uses it). Sourced by
# slurm/collbench.sbatch when COLLBENCH_SITE_ENV=tcp-only (or `site_env: tcp-only` in a campaign
# partition); campaign variants are applied after it and win.

# NCCL: the built-in socket transport only. NCCL_NET_PLUGIN=none keeps a network plugin (such as
# aws-ofi-nccl) from loading at all; NCCL_IB_DISABLE=1 keeps the built-in IB transport off.
export NCCL_NET=Socket
export NCCL_NET_PLUGIN=none
export NCCL_IB_DISABLE=1

# libfabric (the ofi backend): its TCP provider.
export FI_PROVIDER=tcp

# Open MPI (the MPI backend and the mpirun launcher): the ob1 point-to-point layer with TCP
# between nodes and shared memory between ranks of one node; pml ucx and mtl ofi would pick a
# fabric if there were one.
export OMPI_MCA_pml=ob1
export OMPI_MCA_btl=self,vader,tcp

# NCCL's warnings in the job output; a value already in the environment is kept.
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
