# shellcheck shell=bash
# Site environment: AWS p5.48xlarge / p5e.48xlarge / p5en.48xlarge (8 H100 or H200 per node,
# EFA with GPUDirect RDMA). Sourced by slurm/collbench.sbatch before the launch when
# COLLBENCH_SITE_ENV=aws-p5 (or `site_env: aws-p5` in a campaign partition); a campaign
# variant's variables are applied after this file and win.
#
# Current AWS guidance is to set very little by hand. The aws-ofi-nccl plugin reads the
# instance type (DMI product name) and configures the platform itself:
#   FI_PROVIDER=efa (when unset), NCCL_BUFFSIZE=8388608, NCCL_P2P_NET_CHUNKSIZE=524288,
#   NCCL_NVLS_CHUNKSIZE and NCCL_NVLSTREE_MAX_CHUNKSIZE=524288, NCCL_NET_FORCE_FLUSH=0,
#   FI_EFA_FORK_SAFE=1, and NCCL_TUNER_PLUGIN (its own tuner, which picks NCCL's algorithm and
#   protocol for EFA). Repeating those values here would only freeze them across plugin updates.
#
# Deliberately not set:
#   FI_EFA_USE_DEVICE_RDMA=1  unnecessary with current libfabric (1.18 and later): the EFA
#                             provider turns device RDMA on by itself where the hardware has it,
#                             as on p5.
#   NCCL_ALGO, NCCL_PROTO     forcing either makes aws-ofi-nccl hand the choice back to NCCL's
#                             internal tuner (some plugin releases refuse to start instead), so
#                             the AWS tuner is no longer measured. Set them only in a campaign
#                             variant that studies exactly that (slurm/campaigns/p5-efa-nccl-algo.yaml).
#   NCCL_NET                  collbench checks the network NCCL chose per run instead:
#                             --require-net Libfabric exits 3 before measuring when NCCL fell
#                             back to sockets.
#   OMPI_MCA_*                the EFA installer's Open MPI already uses EFA (pml cm, mtl ofi);
#                             the MPI backend should measure that default.

# The EFA library paths, the installer's Open MPI and NCCL_DEBUG=WARN, shared by every AWS site.
# shellcheck source=aws-efa-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/aws-efa-common.sh"
