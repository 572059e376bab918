# shellcheck shell=bash
# Site environment: an on-premise cluster with InfiniBand (or RoCE) and NCCL's built-in IB
# transport. Sourced by slurm/collbench.sbatch when COLLBENCH_SITE_ENV=generic-ib (or
# `site_env: generic-ib` in a campaign partition); campaign variants are applied after it and win.
# Copy it to a file named after your site and fill in the commented lines that apply.

# Fail instead of falling back to TCP sockets when IB cannot be used: a comparison silently run
# over sockets is worse than no result. A value already in the environment is kept.
export NCCL_NET=${NCCL_NET:-IB}

# NCCL's warnings (fallbacks, unusable HCAs) in the job output; INFO is too verbose for a sweep.
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}

# Which HCAs NCCL uses: by default all it finds. List them when a node also has a management
# HCA or ports of another fabric ("=" matches names exactly; ":1" picks the port).
# export NCCL_IB_HCA==mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1

# RoCE only: the GID index of the RoCE v2 address (`show_gids` lists them); InfiniBand needs none.
# export NCCL_IB_GID_INDEX=3

# The interface for NCCL's bootstrap sockets and for Open MPI's TCP traffic, when the default
# (the first non-loopback, non-docker interface) is not the cluster network.
# export NCCL_SOCKET_IFNAME=ib0
# export OMPI_MCA_btl_tcp_if_include=ib0

# The MPI backend over IB: Open MPI through UCX, and the devices UCX may use.
# export OMPI_MCA_pml=ucx
# export UCX_NET_DEVICES=mlx5_0:1
