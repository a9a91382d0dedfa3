// zklock/node_stat.h: a znode's metadata (ZooKeeper's Stat), as zklock reports it.
#pragma once

#include <cstdint>

namespace zklock {

struct NodeStat {
  std::int64_t czxid = 0;     // zxid of the create: unique, grows forever across the ensemble
  std::int64_t mzxid = 0;     // zxid of the last data change
  std::int64_t pzxid = 0;     // zxid of the last child change
  std::int64_t ctime_ms = 0;  // server wall clock at create (ms since epoch)
  std::int64_t mtime_ms = 0;
  std::int32_t version = 0;   // data version
  std::int32_t cversion = 0;  // child version: the next sequential child's number
  std::int32_t aversion = 0;
  std::int64_t ephemeral_owner = 0;  // owning session id, 0 for persistent nodes
  std::int32_t data_length = 0;
  std::int32_t num_children = 0;
};

}  // namespace zklock
