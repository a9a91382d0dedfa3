#include "metrics/request_counters.h"

namespace zklock::detail {

std::string operation_label(testing::Operation op) {
  using testing::Operation;
  switch (op) {
    case Operation::kCreate:
      return "create";
    case Operation::kDelete:
      return "delete";
    case Operation::kGetData:
      return "get_data";
    case Operation::kSetData:
      return "set_data";
    case Operation::kGetChildren:
      return "get_children";
    case Operation::kExists:
      return "exists";
    case Operation::kMulti:
      return "multi";
    case Operation::kRemoveWatches:
      return "remove_watches";
    case Operation::kSync:
      return "sync";
    case Operation::kAddAuth:
      return "add_auth";
  }
  return "other";
}

std::string code_label(Errc rc) {
  switch (rc) {
#define ZKLOCK_CODE(name) \
  case Errc::name:        \
    return #name;
    ZKLOCK_CODE(ok)
    ZKLOCK_CODE(system_error)
    ZKLOCK_CODE(runtime_inconsistency)
    ZKLOCK_CODE(data_inconsistency)
    ZKLOCK_CODE(connection_loss)
    ZKLOCK_CODE(marshalling_error)
    ZKLOCK_CODE(unimplemented)
    ZKLOCK_CODE(operation_timeout)
    ZKLOCK_CODE(bad_arguments)
    ZKLOCK_CODE(invalid_state)
    ZKLOCK_CODE(new_config_no_quorum)
    ZKLOCK_CODE(reconfig_in_progress)
    ZKLOCK_CODE(api_error)
    ZKLOCK_CODE(no_node)
    ZKLOCK_CODE(no_auth)
    ZKLOCK_CODE(bad_version)
    ZKLOCK_CODE(no_children_for_ephemerals)
    ZKLOCK_CODE(node_exists)
    ZKLOCK_CODE(not_empty)
    ZKLOCK_CODE(session_expired)
    ZKLOCK_CODE(invalid_callback)
    ZKLOCK_CODE(invalid_acl)
    ZKLOCK_CODE(auth_failed)
    ZKLOCK_CODE(closing)
    ZKLOCK_CODE(nothing)
    ZKLOCK_CODE(session_moved)
    ZKLOCK_CODE(not_readonly)
    ZKLOCK_CODE(ephemeral_on_local_session)
    ZKLOCK_CODE(no_watcher)
    ZKLOCK_CODE(throttled)
    ZKLOCK_CODE(closed)
#undef ZKLOCK_CODE
    default:
      return "code_" + std::to_string(static_cast<int>(rc));
  }
}

void RequestCounters::add_to(std::map<std::string, std::uint64_t>& requests,
                             std::map<std::string, std::uint64_t>& errors) const {
  for (std::size_t i = 0; i < kOperations; ++i) {
    const std::uint64_t n = sent_[i].load(std::memory_order_relaxed);
    if (n != 0) requests[operation_label(static_cast<testing::Operation>(i))] += n;
  }
  for (std::size_t i = 0; i < kCodeSlots; ++i) {
    const std::uint64_t n = errors_[i].load(std::memory_order_relaxed);
    if (n != 0) errors[code_label(static_cast<Errc>(static_cast<int>(i) + kLowestCode))] += n;
  }
}

}  // namespace zklock::detail
