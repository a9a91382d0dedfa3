# The TLS suite (issue 25, docs/security.md): a real server with a secureClientPort (Netty,
# ssl.clientAuth=need, the X509AuthenticationProvider) and certificates made per run by
# support/make_pki.sh (openssl, keytool). Built only when the C client has TLS (ZooKeeper_HAS_SSL:
# configure with -DZooKeeper_ROOT=PREFIX after scripts/zookeeper-client.sh PREFIX). Labelled
# `tls`: scripts/test.sh tls runs it. Included by tests/CMakeLists.txt.
if(ZooKeeper_HAS_SSL)
  set(_tls ${CMAKE_CURRENT_LIST_DIR})
  zklock_add_test(tls_test ${_tls}/tls_test.cpp ${_tls}/tls_capture_test.cpp
                  LIBS zklock ZooKeeper::zookeeper_mt
                  LABELS tls TIMEOUT 600)
  target_include_directories(tls_test PRIVATE ${_tls})
  target_compile_definitions(tls_test PRIVATE
    ZKLOCK_TEST_ZOOKEEPER_LIBRARY="${ZooKeeper_LIBRARY}")
endif()
