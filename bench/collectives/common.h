// Small pieces several collective definitions share.
#pragma once

#include "collbench/collective.h"

namespace collbench::collectives {

/// The same `count` elements in and out, in-place at offset 0 (all_reduce, broadcast, reduce,
/// sendrecv and the point-to-point tests).
inline Layout same_size_layout(std::size_t count, int /*nranks*/) {
  Layout l;
  l.send_count = l.recv_count = l.param_count = count;
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
