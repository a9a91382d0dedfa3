// TLS in the client seam: the checks on SessionOptions::tls, opening a handle over TLS, and
// dropping a TLS connection from outside the C client's I/O thread.
#include "client/tls.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <linux/tcp.h>  // struct tcp_info with tcpi_bytes_received (glibc's lacks it)
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
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
#include <system_error>
#include <thread>
#include <vector>

#include "client/c_client.h"
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

struct Endpoint {
  sockaddr_storage address{};
  socklen_t length = 0;
};

// "address:port,..." (numeric; IPv6 in brackets or not) as socket addresses.
std::vector<Endpoint> endpoints(const std::string& hosts) {
  std::vector<Endpoint> out;
  std::size_t start = 0;
  while (start <= hosts.size()) {
    std::size_t end = hosts.find(',', start);
    if (end == std::string::npos) end = hosts.size();
    const std::string one = hosts.substr(start, end - start);
    start = end + 1;
    const auto colon = one.rfind(':');
    if (colon == std::string::npos) continue;
    std::string address = one.substr(0, colon);
    if (address.size() >= 2 && address.front() == '[')
      address = address.substr(1, address.size() - 2);
    const int port = std::atoi(one.c_str() + colon + 1);
    Endpoint e;
    auto* v4 = reinterpret_cast<sockaddr_in*>(&e.address);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&e.address);
    if (inet_pton(AF_INET, address.c_str(), &v4->sin_addr) == 1) {
      v4->sin_family = AF_INET;
      v4->sin_port = htons(static_cast<std::uint16_t>(port));
      e.length = sizeof(sockaddr_in);
    } else if (inet_pton(AF_INET6, address.c_str(), &v6->sin6_addr) == 1) {
      v6->sin6_family = AF_INET6;
      v6->sin6_port = htons(static_cast<std::uint16_t>(port));
      e.length = sizeof(sockaddr_in6);
    } else {
      continue;
    }
    out.push_back(e);
  }
  return out;
}

bool same_endpoint(const sockaddr_storage& a, const Endpoint& b) {
  if (a.ss_family != b.address.ss_family) return false;
  if (a.ss_family == AF_INET) {
    const auto* x = reinterpret_cast<const sockaddr_in*>(&a);
    const auto* y = reinterpret_cast<const sockaddr_in*>(&b.address);
    return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
  }
  const auto* x = reinterpret_cast<const sockaddr_in6*>(&a);
  const auto* y = reinterpret_cast<const sockaddr_in6*>(&b.address);
  return x->sin6_port == y->sin6_port &&
         std::memcmp(&x->sin6_addr, &y->sin6_addr, sizeof x->sin6_addr) == 0;
}

bool connected_to(int fd, const std::vector<Endpoint>& peers) {
  sockaddr_storage peer{};
  socklen_t length = sizeof peer;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &length) != 0) return false;
  for (const Endpoint& e : peers) {
    if (same_endpoint(peer, e)) return true;
  }
  return false;
}

#if ZKLOCK_HAVE_ZOOKEEPER_SSL
std::mutex& init_ssl_mutex() {
  static std::mutex m;
  return m;
}
#endif

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
  if (zh != nullptr) zoo_set_log_callback(zh, log);
  return zh;
#else
  errno = ENOSYS;
  return nullptr;
#endif
}

bool shut_down_connection(zhandle_t* zh, const std::string& hosts) noexcept {
  if (zh == nullptr) return false;
  // The C client offers no way to drop a connection other than zoo_set_servers, which frees its
  // SSL objects on the calling thread. Its socket is zh->fd->sock: `struct _zhandle` (private)
  // begins with `zsock_t* fd` in every 3.5-3.9 client, and zsock_t (public, zookeeper.h) with
  // `int sock`. The socket number read here may be stale (the I/O thread closes and reopens it):
  // it is shut down only if it is connected to one of our servers.
  const zsock_t* socket_struct = *reinterpret_cast<zsock_t* const*>(zh);
  if (socket_struct == nullptr) return false;
  const int fd = __atomic_load_n(&socket_struct->sock, __ATOMIC_RELAXED);
  if (fd < 0) return false;
  if (!connected_to(fd, endpoints(hosts))) return false;
  return shutdown(fd, SHUT_RDWR) == 0;
}

int shut_down_silent_handshakes(const std::string& hosts) noexcept {
  const std::vector<Endpoint> peers = endpoints(hosts);
  if (peers.empty()) return 0;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return 0;
  int count = 0;
  const int own = dirfd(dir);
  while (const dirent* entry = readdir(dir)) {  // NOLINT(concurrency-mt-unsafe): own DIR
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);  // NOLINT(google-runtime-int)
    if (end == entry->d_name || *end != '\0' || fd == own) continue;
    const int s = static_cast<int>(fd);
    if (!connected_to(s, peers)) continue;
    tcp_info info{};
    socklen_t length = sizeof info;
    if (getsockopt(s, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) continue;
    if (info.tcpi_state != 1 /* TCP_ESTABLISHED */ || info.tcpi_bytes_received != 0) continue;
    if (shutdown(s, SHUT_RDWR) == 0) ++count;
  }
  closedir(dir);
  return count;
}

void close_tls_handle(zhandle_t* zh, const std::string& hosts) {
  // The 3.8 C client's TLS handshake loops in its I/O thread until the server answers, without a
  // timeout and without looking at close requests: against a peer that accepted the connection
  // and says nothing, zookeeper_close would wait for that thread forever. A failed handshake
  // makes the I/O thread look at the close request.
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::thread breaker([&] {
    std::unique_lock lock(m);
    while (!cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return done; })) {
      shut_down_silent_handshakes(hosts);
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
