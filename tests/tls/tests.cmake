# The TLS suite (issue 25, docs/security.md): a real server with a secureClientPort (Netty,
# ssl.clientAuth=need, the X509AuthenticationProvider) and certificates made per run by
# support/make_pki.sh (openssl, keytool). Built only when the C client has TLS (ZooKeeper_HAS_SSL:
# configure with -DZooKeeper_ROOT=PREFIX after scripts/zookeeper-client.sh PREFIX). Labelled
# `tls`: scripts/test.sh tls runs it, and the TLS runs of the wire suites (below) and of the
# kernel-fault scenarios (netfaults/tests.cmake). Included by tests/CMakeLists.txt.
if(ZooKeeper_HAS_SSL)
  set(_tls ${CMAKE_CURRENT_LIST_DIR})
  zklock_add_test(tls_test ${_tls}/tls_test.cpp ${_tls}/tls_capture_test.cpp
                  LIBS zklock ZooKeeper::zookeeper_mt
                  LABELS tls TIMEOUT 600)
  target_include_directories(tls_test PRIVATE ${_tls})
  target_compile_definitions(tls_test PRIVATE
    ZKLOCK_TEST_ZOOKEEPER_LIBRARY="${ZooKeeper_LIBRARY}")
  # White box: how a TLS connection's phase reads while its TCP connect or its handshake waits.
  zklock_add_test(tls_connection_phase_test ${_tls}/tls_connection_phase_test.cpp
                  LIBS zklock ZooKeeper::zookeeper_mt LABELS tls WHITE_BOX)

  # The CLI over TLS: its --tls-* options, which CAs it trusts, what `zklock exec`'s command
  # inherits.
  if(TARGET zklock-cli)
    zklock_add_test(tls_cli_test ${_tls}/tls_cli_test.cpp ${_tls}/../cli/cli_process.cpp
                    LIBS zklock LABELS tls TIMEOUT 300)
    target_include_directories(tls_cli_test PRIVATE ${_tls} ${_tls}/../cli)
    target_compile_definitions(tls_cli_test PRIVATE ZKLOCK_CLI="$<TARGET_FILE:zklock-cli>")
    add_dependencies(tls_cli_test zklock-cli)
    set_property(TEST tls_cli_test APPEND PROPERTY ENVIRONMENT ${ZKLOCK_TLS_TEST_ENVIRONMENT})
  endif()

  # The wire suites over TLS: the Mutex, SharedMutex, Semaphore and asynchronous suites' binaries
  # once more, with ZKLOCK_TEST_OVER_TLS=1 - every server they start serves TLS too, and every
  # session options_for() makes for such a server goes over TLS (tests/test_env.h,
  # tests/support/zk_server.h): acquisition, hand-off, lost create replies, session loss, a
  # 3-node ensemble losing its leader... A session through a proxy stays plain. A run with no
  # session over TLS fails.
  foreach(_suite mutex_test shared_mutex_test semaphore_test semaphore_async_test async_lock_test)
    add_test(NAME ${_suite}_over_tls COMMAND ${_suite})
    set_tests_properties(${_suite}_over_tls PROPERTIES LABELS tls TIMEOUT 600
                         ENVIRONMENT "${ZKLOCK_TEST_ENVIRONMENT};${ZKLOCK_TLS_TEST_ENVIRONMENT};ZKLOCK_TEST_OVER_TLS=1")
  endforeach()
  set_property(TEST tls_test tls_connection_phase_test APPEND PROPERTY ENVIRONMENT
               ${ZKLOCK_TLS_TEST_ENVIRONMENT})
endif()
