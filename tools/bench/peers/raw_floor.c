/* From the shared peer set (shared/peers/), so that scripts/bench_compare.sh runs from a fresh
 * clone; one addition: cpu_us_per_acq, the process's CPU time (getrusage: user + system, every
 * thread - the C client's too) over the timed loop, per acquisition, as zklock-bench counts it. */
/* Floor for the lock recipe on a given server: the bare ZooKeeper operations that one
 * uncontended acquire+release needs (create EPHEMERAL_SEQUENTIAL, get_children, delete),
 * issued synchronously one after another, with no recipe logic around them.
 * usage: raw_floor HOSTS ITERS   (prints one JSON line) */
#include <zookeeper/zookeeper.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static double cpu_us(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6 + u.ru_utime.tv_usec + u.ru_stime.tv_usec;
}
static int cmp(const void *a, const void *b) { double x = *(double *)a, y = *(double *)b; return x < y ? -1 : x > y; }

int main(int argc, char **argv) {
  int iters = atoi(argv[2]);
  zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
  zhandle_t *zh = zookeeper_init(argv[1], NULL, 10000, NULL, NULL, 0);
  for (int i = 0; i < 100 && zoo_state(zh) != ZOO_CONNECTED_STATE; i++) usleep(50000);
  char parent[64];
  snprintf(parent, sizeof parent, "/bench/raw-%d", getpid());
  zoo_create(zh, "/bench", NULL, 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  zoo_create(zh, parent, NULL, 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
  char prefix[96], made[128];
  snprintf(prefix, sizeof prefix, "%s/lock-", parent);
  double *lat = malloc(sizeof(double) * iters);
  double cpu0 = cpu_us();
  double t0 = now();
  for (int i = 0; i < iters; i++) {
    double a = now();
    if (zoo_create(zh, prefix, NULL, 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL | ZOO_SEQUENCE, made, sizeof made) != ZOK) return 1;
    struct String_vector kids;
    if (zoo_get_children(zh, parent, 0, &kids) != ZOK) return 1;
    deallocate_String_vector(&kids);
    lat[i] = now() - a;
    if (zoo_delete(zh, made, -1) != ZOK) return 1;
  }
  double secs = now() - t0;
  double cpu = cpu_us() - cpu0;
  qsort(lat, iters, sizeof(double), cmp);
  printf("{\"impl\": \"raw-ops\", \"mode\": \"uncontended\", \"clients\": 1, \"iters\": %d, \"seconds\": %.4f, \"ops_per_s\": %.1f, \"p50_us\": %.1f, \"p99_us\": %.1f, \"overlaps\": 0, \"cpu_us_per_acq\": %.1f}\n",
         iters, secs, iters / secs, lat[iters / 2] * 1e6, lat[(int)(iters * 0.99)] * 1e6, cpu / iters);
  zookeeper_close(zh);
  return 0;
}
