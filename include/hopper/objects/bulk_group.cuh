// hopper::bulk_group: the bulk async-group of the calling thread. Stores to global
// issued by cp.async.bulk ... .bulk_group are collected into a group by commit(); wait<N>() and
// wait_read<N>() bound how many of the most recent groups may still be in flight.
#pragma once
#include "hopper/ptx/cp_async_bulk.cuh"

namespace hopper {

struct bulk_group {
  // cp.async.bulk.commit_group: close the group of bulk copies issued since the last commit.
  __device__ static void commit() { ptx::cp_async_bulk_commit_group(); }
  // cp.async.bulk.wait_group N: at most N groups still pending, writes included.
  template <int N = 0>
  __device__ static void wait() {
    ptx::cp_async_bulk_wait_group<N>();
  }
  // cp.async.bulk.wait_group.read N: at most N groups still reading their sources:
  // the shared-memory sources of the others may be overwritten.
  template <int N = 0>
  __device__ static void wait_read() {
    ptx::cp_async_bulk_wait_group_read<N>();
  }
};

}  // namespace hopper
