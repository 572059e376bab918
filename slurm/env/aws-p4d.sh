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

# The EFA library paths, the installer's Open MPI and NCCL_DEBUG=WARN, shared by every AWS site.
# shellcheck source=aws-efa-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/aws-efa-common.sh"
