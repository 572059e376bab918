# shellcheck shell=bash
# Site environment: AWS g5 with EFA (g5.8xlarge to g5.48xlarge; 8 A10G on g5.48xlarge, one
# 100 Gbit/s EFA device). Sourced by slurm/collbench.sbatch when COLLBENCH_SITE_ENV=aws-g5 (or
# `site_env: aws-g5` in a campaign partition); campaign variants are applied after it and win.
#
# No GPUDirect RDMA on g5: the EFA device cannot read or write GPU memory, so NCCL stages every
# network transfer through host memory. Expect inter-node bandwidth well below p4d/p5 at large
# sizes and higher CPU use; that is the platform, not a misconfiguration.
#
# The aws-ofi-nccl plugin configures g5 itself: FI_PROVIDER=efa (when unset), the send/recv
# protocol without GPUDirect, NCCL_TOPO_FILE on g5.48xlarge (its PCIe layout), FI_EFA_FORK_SAFE=1
# and NCCL_TUNER_PLUGIN.
#
# Deliberately not set:
#   FI_EFA_USE_DEVICE_RDMA=1  wrong here: g5's EFA device has no RDMA read, and libfabric aborts
#                             the process when it is asked for RDMA the device lacks. Current
#                             libfabric picks the right default.
#   NCCL_NET_GDR_LEVEL, NCCL_NET_GDR_READ  there is no GPUDirect RDMA to tune.
#   NCCL_ALGO, NCCL_PROTO     forcing either disables the plugin's tuner; set them only in a
#                             variant that studies them.

# The EFA library paths, the installer's Open MPI and NCCL_DEBUG=WARN, shared by every AWS site.
# shellcheck source=aws-efa-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/aws-efa-common.sh"
