// TLS in the client seam: the checks on SessionOptions::tls, opening a handle over TLS, and
// closing one without waiting on a silent handshake.
#include "client/tls.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>
#include <vector>

#include "client/c_client.h"
#include "client/connection_drop.h"
#include "zklock/errors.h"

#if ZKLOCK_HAVE_ZOOKEEPER_SSL
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#endif

namespace zklock::detail {
namespace {

constexpr const char* kHowToGetTls =
    "build a C client with TLS with scripts/zookeeper-client.sh PREFIX and configure zklock with "
    "-DZooKeeper_ROOT=PREFIX (docs/security.md)";

#if ZKLOCK_HAVE_ZOOKEEPER_SSL
struct FileCloser {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

File open_file(const std::string& path, const char* what) {
  File f(std::fopen(path.c_str(), "r"));
  if (!f) {
    throw TlsError("SessionOptions::tls." + std::string(what) + " \"" + path +
                   "\": cannot be read (" + std::generic_category().message(errno) + ")");
  }
  return f;
}

std::string openssl_reason() {
  const unsigned long e = ERR_get_error();  // NOLINT(google-runtime-int): OpenSSL's type
  ERR_clear_error();
  if (e == 0) return "no PEM data";
  std::array<char, 256> buf{};
  ERR_error_string_n(e, buf.data(), buf.size());
  return buf.data();
}

// Never lets OpenSSL prompt on a terminal for a password: an encrypted key without one fails.
int password_callback(char* buf, int size, int /*rwflag*/, void* u) {
  const auto* password = static_cast<const std::string*>(u);
  if (password->empty() || static_cast<int>(password->size()) > size) return 0;
  std::copy(password->begin(), password->end(), buf);  // OpenSSL takes the length returned
  return static_cast<int>(password->size());
}

std::string asn1_time(const ASN1_TIME* t) {
  std::tm tm{};
  if (ASN1_TIME_to_tm(t, &tm) != 1) return "?";
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf.data();
}

void check_files(const TlsOptions& tls) {
  ERR_clear_error();
  {
    File f = open_file(tls.ca_file, "ca_file");
    std::unique_ptr<X509, decltype(&X509_free)> ca(
        PEM_read_X509(f.get(), nullptr, nullptr, nullptr), &X509_free);
    if (!ca) {
      throw TlsError("SessionOptions::tls.ca_file \"" + tls.ca_file +
                     "\": no PEM certificate in it (" + openssl_reason() + ")");
    }
  }
  File cf = open_file(tls.cert_file, "cert_file");
  std::unique_ptr<X509, decltype(&X509_free)> cert(
      PEM_read_X509(cf.get(), nullptr, nullptr, nullptr), &X509_free);
  if (!cert) {
    throw TlsError("SessionOptions::tls.cert_file \"" + tls.cert_file +
                   "\": no PEM certificate in it (" + openssl_reason() + ")");
  }
  // The server refuses an expired client certificate (or one not yet valid) in the handshake, and
  // the C client then retries forever: said here, at once, instead.
  if (X509_cmp_current_time(X509_get0_notAfter(cert.get())) < 0) {
    throw TlsError("SessionOptions::tls.cert_file \"" + tls.cert_file +
                   "\": the certificate expired on " + asn1_time(X509_get0_notAfter(cert.get())) +
                   ": renew it");
  }
  if (X509_cmp_current_time(X509_get0_notBefore(cert.get())) > 0) {
    throw TlsError("SessionOptions::tls.cert_file \"" + tls.cert_file +
                   "\": the certificate is not valid before " +
                   asn1_time(X509_get0_notBefore(cert.get())));
  }
  File kf = open_file(tls.key_file, "key_file");
  std::string password = tls.key_password;
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      PEM_read_PrivateKey(kf.get(), nullptr, &password_callback, &password), &EVP_PKEY_free);
  if (!key) {
    throw TlsError("SessionOptions::tls.key_file \"" + tls.key_file +
                   "\": the private key cannot be read (" +
                   (tls.key_password.empty()
                        ? std::string("not a PEM key, or an encrypted one and no key_password")
                        : std::string("a wrong key_password, or not a PEM key")) +
                   "; " + openssl_reason() + ")");
  }
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    throw TlsError("SessionOptions::tls.key_file \"" + tls.key_file +
                   "\" is not the key of the certificate in \"" + tls.cert_file + "\"");
  }
}
#endif

#if ZKLOCK_HAVE_ZOOKEEPER_SSL
std::mutex& init_ssl_mutex() {
  static std::mutex m;
  return m;
}
#endif

// The process's TLS handles that are open and not closing. While one closes, the handshakes of
// these must go on: with a slow server (a JVM just started, a loaded machine) every close in the
// process would otherwise cut the handshakes of the others - seen: a session of four opened at
// once found no handshake completed within its 10 s connect timeout. A handle leaves the set,
// under its mutex, before zookeeper_close begins: a handle read under the mutex is open.
struct LiveTlsHandles {
  std::mutex mutex;
  std::set<zhandle_t*> handles;
};

LiveTlsHandles& live_tls_handles() {
  static LiveTlsHandles live;
  return live;
}

}  // namespace

bool client_has_tls() noexcept { return ZKLOCK_HAVE_ZOOKEEPER_SSL != 0; }

std::string checked_tls_settings(const TlsOptions& tls) {
  const std::array<std::pair<const char*, const std::string*>, 3> files = {
      {{"ca_file", &tls.ca_file}, {"cert_file", &tls.cert_file}, {"key_file", &tls.key_file}}};
  for (const auto& [name, value] : files) {
    if (value->empty()) {
      throw InvalidArgumentError(std::string("SessionOptions::tls.") + name +
                                 " is empty (the C client needs a CA, a client certificate and "
                                 "its key)");
    }
    if (value->find(',') != std::string::npos) {
      throw InvalidArgumentError(std::string("SessionOptions::tls.") + name + " \"" + *value +
                                 "\": the C client cannot take a ',' in a TLS file name");
    }
  }
  if (tls.key_password.find(',') != std::string::npos) {
    throw InvalidArgumentError(
        "SessionOptions::tls.key_password: the C client cannot take a ',' in it");
  }
  if (!client_has_tls()) {
    throw TlsError(
        "SessionOptions::tls: this zklock was built against a ZooKeeper C client without TLS "
        "(its libzookeeper_mt has no zookeeper_init_ssl; Debian's has none): " +
        std::string(kHowToGetTls));
  }
#if ZKLOCK_HAVE_ZOOKEEPER_SSL
  check_files(tls);
#endif
  return tls.ca_file + "," + tls.cert_file + "," + tls.key_file + "," + tls.key_password;
}

zhandle_t* open_handle(const std::string& hosts,
                       void (*watcher)(zhandle_t*, int, int, const char*, void*), int timeout_ms,
                       void* context, CLogCallback log,
                       const std::optional<std::string>& tls_settings) {
  if (!tls_settings) {
    return zookeeper_init2(hosts.c_str(), watcher, timeout_ms, nullptr, context,
                           ZOO_NO_LOG_CLIENTENV, log);
  }
#if ZKLOCK_HAVE_ZOOKEEPER_SSL
  zhandle_t* zh = nullptr;
  {
    // zookeeper_init_ssl splits the settings with strtok (not reentrant): one at a time.
    std::lock_guard lock(init_ssl_mutex());
    // The C client writes to its TLS socket with SSL_write, which sends without MSG_NOSIGNAL: a
    // connection the server closed would raise SIGPIPE and end the process. Its two threads are
    // started here and inherit this thread's signal mask: with SIGPIPE blocked in them, such a
    // write fails with EPIPE instead (a connection loss the C client handles). The process's own
    // SIGPIPE disposition is left alone.
    sigset_t pipe_only;
    sigset_t previous;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &previous);
    zh = zookeeper_init_ssl(hosts.c_str(), tls_settings->c_str(), watcher, timeout_ms, nullptr,
                            context, ZOO_NO_LOG_CLIENTENV);
    const int saved_errno = errno;
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    errno = saved_errno;
  }
  // It has no log-callback parameter. Until this line its lines go to the process-wide stream;
  // the process level is ERROR (log_router.cpp), and its first error comes after a connect.
  if (zh != nullptr) {
    zoo_set_log_callback(zh, log);
    LiveTlsHandles& live = live_tls_handles();
    std::lock_guard lock(live.mutex);
    live.handles.insert(zh);
  }
  return zh;
#else
  errno = ENOSYS;
  return nullptr;
#endif
}

void close_tls_handle(zhandle_t* zh, const std::string& hosts) {
  // The 3.8 C client's TLS handshake loops in its I/O thread until the server answers, without a
  // timeout and without looking at close requests: against a peer that accepted the connection
  // and says nothing, zookeeper_close would wait for that thread forever. A failed handshake
  // makes the I/O thread look at the close request. The sockets of the other open handles are
  // spared (LiveTlsHandles).
  LiveTlsHandles& live = live_tls_handles();
  {
    std::lock_guard lock(live.mutex);
    live.handles.erase(zh);
  }
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::thread breaker([&] {
    std::unique_lock lock(m);
    while (!cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return done; })) {
      std::lock_guard live_lock(live.mutex);
      std::set<int> spared;
      for (zhandle_t* other : live.handles) spared.insert(current_socket(other));
      shut_down_silent_handshakes(hosts, spared);
    }
  });
  zookeeper_close(zh);
  {
    std::lock_guard lock(m);
    done = true;
  }
  cv.notify_all();
  breaker.join();
}

}  // namespace zklock::detail
