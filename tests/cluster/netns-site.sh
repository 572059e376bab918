# shellcheck shell=bash
# Site environment of the test cluster (network-namespace hosts joined by a bridge): everything
# over TCP as in slurm/env/tcp-only.sh, except that MPI traffic goes through Open MPI's libfabric
# path (pml cm, mtl ofi, provider tcp;ofi_rxm). Open MPI 4.1.4's TCP BTL crashes inside MPI_Init
# (a null callback in its connection handling) in roughly 5-10 % of 8-rank `srun --mpi=pmix`
# starts on a 2-core test host, with any MPI program; the libfabric path showed no failure in
# 80 starts.
# shellcheck source=../../slurm/env/tcp-only.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../slurm/env/tcp-only.sh"
export OMPI_MCA_pml=cm
export OMPI_MCA_mtl=ofi
export OMPI_MCA_mtl_ofi_provider_include="tcp;ofi_rxm"
export OMPI_MCA_btl=self
