// Small pieces several collective definitions share.
#pragma once

#include "collbench/collective.h"

namespace collbench::collectives {

/// The same `count` elements in and out, in-place at offset 0 (all_reduce, broadcast, reduce,
/// sendrecv and the point-to-point tests).
inline Layout same_size_layout(std::size_t count, int /*nranks*/, std::size_t /*element_size*/) {
  Layout l;
  l.send_count = l.recv_count = l.param_count = count;
  return l;
}

/// Each rank's share of `count` elements, rounded down to whole 16-byte units as nccl-tests does
/// for all_gather, reduce_scatter and alltoall, so sizes match nccl-tests on any rank count.
inline std::size_t per_rank_count(std::size_t count, int nranks, std::size_t element_size) {
  const std::size_t unit = element_size < 16 ? 16 / element_size : 1;
  return count / static_cast<std::size_t>(nranks) / unit * unit;
}

/// all_gather and gather: the size is the gathered buffer; each rank sends 1/n of it and, in
/// place, its block already sits at its slot of the output.
inline Layout gathered_layout(std::size_t count, int nranks, std::size_t element_size) {
  Layout l;
  l.param_count = per_rank_count(count, nranks, element_size);
  l.send_count = l.param_count;
  l.recv_count = l.param_count * static_cast<std::size_t>(nranks);
  l.send_inplace_offset = l.param_count;
  return l;
}

/// reduce_scatter and scatter: the size is the input buffer; each rank receives 1/n of it and,
/// in place, rank r's block lands at offset r of the input.
inline Layout scattered_layout(std::size_t count, int nranks, std::size_t element_size) {
  Layout l;
  l.param_count = per_rank_count(count, nranks, element_size);
  l.recv_count = l.param_count;
  l.send_count = l.param_count * static_cast<std::size_t>(nranks);
  l.recv_inplace_offset = l.param_count;
  return l;
}

inline double factor_one(int /*nranks*/) { return 1.0; }
/// all_gather, reduce_scatter, alltoall: each rank receives (n-1)/n of the data over the bus.
inline double factor_n_minus_1_over_n(int n) { return static_cast<double>(n - 1) / n; }

inline std::uint64_t param_bytes(const Layout& l, std::size_t es, int /*nranks*/) {
  return l.param_count * es;
}
/// The whole gathered (or scattered) buffer: param_count elements from every rank.
inline std::uint64_t all_ranks_bytes(const Layout& l, std::size_t es, int nranks) {
  return l.param_count * es * static_cast<std::uint64_t>(nranks);
}

inline int one_transfer(int /*window*/) { return 1; }

/// An expectation that output element j is rank `source`'s input element j.
inline VerifySpec copy_of(int source, std::size_t count) {
  VerifySpec v;
  v.count = count;
  v.source_rank = source;
  return v;
}

inline CollArgs args(Primitive p, const IssueContext& c, const void* send, void* recv,
                     std::size_t count, int peer = -1) {
  CollArgs a;
  a.primitive = p;
  a.send = send;
  a.recv = recv;
  a.count = count;
  a.dtype = c.dtype;
  a.op = c.op;
  a.root = c.root;
  a.peer = peer;
  a.placement = c.placement;
  return a;
}

}  // namespace collbench::collectives
