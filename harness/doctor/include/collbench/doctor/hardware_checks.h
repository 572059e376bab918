// Per-host checks of the hardware facts: does the host have what its instance type promises,
// are its RDMA ports up, can GPUDirect RDMA work, are limits and topology sane. Each finding has
// a stable check id, one line naming the values, why it matters, and the public source of the
// rule where there is one.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "collbench/doctor/facts.h"

namespace collbench::doctor {

/// What an EC2 instance type has, from AWS's published specifications.
struct InstanceSpec {
  std::string_view instance_type;  ///< "p5.48xlarge"
  int gpus = 0;
  /// Words every GPU's model contains ("H100"; "A100", "40GB").
  std::span<const std::string_view> model_words;
  int efa_devices = 0;
  std::string_view source;  ///< a public URL stating the counts
};

/// The instance types the checks know; the spec of `instance_type`, or nullptr.
std::span<const InstanceSpec> known_instance_types();
const InstanceSpec* find_instance_spec(std::string_view instance_type);

/// The findings of one host, in a fixed order. Check ids:
///   host.summary            ok    what was found (GPUs, driver, RDMA devices and rates)
///   gpus.driver             failure  GPUs without a driver version
///   instance.gpus           failure  fewer GPUs than the instance type has
///   instance.gpu_model      warning  GPUs of another model than the instance type's
///   instance.efa            failure  fewer EFA devices than the instance type has
///   nics.ports_down         failure  RDMA ports not ACTIVE
///   nics.rates              warning  ports at different rates on one host
///   gpudirect.rdma          failure  EFA, InfiniBand or RoCE devices and GPUs, but neither
///                                    nvidia_peermem nor dma-buf
///   gpudirect.path          info     which path GPUDirect RDMA can use (peermem, dma-buf)
///   memory.memlock          warning  locked memory limited while RDMA devices exist
///   topology.gpu_nic        warning  GPUs whose closest NIC is across the system (info when
///                                    the host has a single RDMA device)
///   gpus.ecc                warning/info  ECC off on some (warning) or all (info) GPUs
///   gpus.mig                warning  MIG mode on
///   gpus.persistence        info     persistence mode off
std::vector<Finding> hardware_findings(const HostFacts& facts);

}  // namespace collbench::doctor
