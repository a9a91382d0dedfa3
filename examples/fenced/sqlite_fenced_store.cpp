#include "sqlite_fenced_store.h"

#include <sqlite3.h>

#include <stdexcept>

namespace zklock::examples {
namespace {

[[noreturn]] void fail(sqlite3* db, const std::string& what) {
  throw std::runtime_error("sqlite: " + what + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}

// One prepared statement, finalized on every exit path.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) fail(db, sql);
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  sqlite3_stmt* get() const { return stmt_; }
  // Returns: true for a row, false when done.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail(db_, sqlite3_sql(stmt_));
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace

FencedCounterStore::FencedCounterStore(const std::string& path,
                                       std::chrono::milliseconds busy_timeout) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    const std::string message =
        "open " + path + ": " + (db_ ? sqlite3_errmsg(db_) : "out of memory");
    sqlite3_close(db_);
    throw std::runtime_error("sqlite: " + message);
  }
  sqlite3_busy_timeout(db_, static_cast<int>(busy_timeout.count()));
  // Several processes may run this at once. BEGIN IMMEDIATE takes the write lock before anything is
  // read: a statement that reads first and then needs the write lock can get SQLITE_BUSY at once,
  // without the busy timeout, when another connection is mid-write (SQLite's deadlock rule).
  const char* schema =
      "BEGIN IMMEDIATE;"
      "CREATE TABLE IF NOT EXISTS counter ("
      "  id INTEGER PRIMARY KEY CHECK (id = 1),"
      "  value INTEGER NOT NULL,"
      "  token INTEGER NOT NULL);"
      "INSERT OR IGNORE INTO counter (id, value, token) VALUES (1, 0, 0);"
      "COMMIT;";
  char* error = nullptr;
  if (sqlite3_exec(db_, schema, nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string message = error ? error : "unknown error";
    sqlite3_free(error);
    sqlite3_close(db_);  // an open transaction is rolled back
    throw std::runtime_error("sqlite: create table in " + path + ": " + message);
  }
}

FencedCounterStore::~FencedCounterStore() { sqlite3_close(db_); }

FencedCounterStore::State FencedCounterStore::read() const {
  Statement s(db_, "SELECT value, token FROM counter WHERE id = 1");
  if (!s.step()) throw std::runtime_error("sqlite: the counter row is missing");
  return {sqlite3_column_int64(s.get(), 0), sqlite3_column_int64(s.get(), 1)};
}

FencedCounterStore::Outcome FencedCounterStore::increment(zklock::FencingToken token) {
  if (!token.valid())
    throw std::invalid_argument("FencedCounterStore::increment: empty fencing token");
  // The transaction only takes the write lock up front (see the constructor); the fence itself is
  // the single UPDATE: compare and write in one statement.
  exec("BEGIN IMMEDIATE");
  try {
    Outcome out;
    {
      Statement s(db_,
                  "UPDATE counter SET value = value + 1, token = ?1 "
                  "WHERE id = 1 AND token <= ?1 RETURNING value, token");
      sqlite3_bind_int64(s.get(), 1, token.value());
      // RETURNING gives the row as the statement left it; no row: the WHERE clause refused us.
      if (s.step()) {
        out = {true, {sqlite3_column_int64(s.get(), 0), sqlite3_column_int64(s.get(), 1)}};
        s.step();  // runs the statement to completion
      }
    }
    if (!out.applied) out.state = read();  // the row that refused us, for the caller's message
    exec("COMMIT");
    return out;
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

void FencedCounterStore::exec(const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string message =
        std::string("sqlite: ") + sql + ": " + (error ? error : "unknown error");
    sqlite3_free(error);
    throw std::runtime_error(message);
  }
}

}  // namespace zklock::examples
