# shellcheck shell=bash
# Site environment: AWS p4d.24xlarge / p4de.24xlarge (8 A100 per node, 4 EFA devices with
# GPUDirect RDMA). Sourced by slurm/collbench.sbatch when COLLBENCH_SITE_ENV=aws-p4d (or
# `site_env: aws-p4d` in a campaign partition); campaign variants are applied after it and win.
#
# The aws-ofi-nccl plugin configures p4d itself (it matches the DMI product name):
#   FI_PROVIDER=efa (when unset), NCCL_TOPO_FILE=<the plugin's p4d-24xl-topo.xml> (the PCIe
#   layout NCCL cannot see through the hypervisor), NCCL_BUFFSIZE=8388608,
#   NCCL_P2P_NET_CHUNKSIZE=524288, FI_EFA_FORK_SAFE=1, NCCL_TUNER_PLUGIN, and NCCL_PROTO=simple
#   when the EFA device cannot guarantee 128-byte write ordering (LL and LL128 would corrupt data
#   without it). Do not set these here.
#
# Deliberately not set:
#   FI_EFA_USE_DEVICE_RDMA=1  unnecessary with current libfabric (1.18 and later): the EFA
#                             provider enables RDMA read on p4d by itself; old guides set it
#                             because older libfabric defaulted it off for this device.
#   NCCL_ALGO, NCCL_PROTO     forcing either disables the plugin's tuner (NCCL's internal tuner
#                             decides instead; some plugin releases refuse to start) and
#                             NCCL_PROTO=LL/LL128 is unsafe on p4d (see above).
#   NCCL_NET                  use collbench --require-net Libfabric to fail runs that fell back
#                             to sockets.

# The EFA installer's libfabric and the aws-ofi-nccl plugin, ahead of other copies.
for _collbench_dir in /opt/amazon/efa/lib /opt/amazon/ofi-nccl/lib /opt/amazon/ofi-nccl/lib64 /opt/aws-ofi-nccl/lib; do
  if [[ -d $_collbench_dir ]]; then LD_LIBRARY_PATH=$_collbench_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
done
unset _collbench_dir
export LD_LIBRARY_PATH

# The EFA installer's Open MPI (mpirun launcher, MPI backend over EFA through pml cm / mtl ofi).
if [[ -d /opt/amazon/openmpi/bin ]]; then export PATH=/opt/amazon/openmpi/bin:$PATH; fi

# NCCL's warnings in the job output; a value already in the environment is kept.
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
