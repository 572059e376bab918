#include "reduce.h"

namespace collbench::stand_in {

std::size_t nccl_type_size(ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2:
      return 1;
    case ncclFloat16:
    case ncclBfloat16:
      return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
      return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64:
      return 8;
    default:
      return 0;
  }
}

DType dtype_of(ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
      return DType::kInt8;
    case ncclUint8:
      return DType::kUint8;
    case ncclInt32:
      return DType::kInt32;
    case ncclUint32:
      return DType::kUint32;
    case ncclInt64:
      return DType::kInt64;
    case ncclUint64:
      return DType::kUint64;
    case ncclFloat16:
      return DType::kHalf;
    case ncclFloat32:
      return DType::kFloat;
    case ncclFloat64:
      return DType::kDouble;
    case ncclBfloat16:
      return DType::kBfloat16;
    case ncclFloat8e4m3:
      return DType::kFp8E4M3;
    case ncclFloat8e5m2:
      return DType::kFp8E5M2;
    default:
      return DType::kInt8;
  }
}

void reduce(ncclDataType_t type, ncclRedOp_t op, const std::vector<const unsigned char*>& inputs,
            std::size_t count, unsigned char* out) {
  using namespace reduce_detail;
  switch (type) {
    case ncclInt8:
      return reduce_integers<std::int8_t>(op, inputs, count, out);
    case ncclUint8:
      return reduce_integers<std::uint8_t>(op, inputs, count, out);
    case ncclInt32:
      return reduce_integers<std::int32_t>(op, inputs, count, out);
    case ncclUint32:
      return reduce_integers<std::uint32_t>(op, inputs, count, out);
    case ncclInt64:
      return reduce_integers<std::int64_t>(op, inputs, count, out);
    case ncclUint64:
      return reduce_integers<std::uint64_t>(op, inputs, count, out);
    default:
      return reduce_floating(dtype_of(type), op, inputs, count, out);
  }
}

}  // namespace collbench::stand_in
