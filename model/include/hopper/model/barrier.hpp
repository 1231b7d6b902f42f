// An mbarrier in a CTA's shared memory, driven by tasks under the scheduler: the PTX state
// machine of mbarrier.hpp plus what only a multi-task program can get wrong:
// happens-before through release arrivals and acquiring waits, the visibility of mbarrier.init
// (fence.mbarrier_init), use after the owning CTA exited, phase races (an arrival or a copy's
// bytes whose phase depends on the schedule) and waits whose parity names another phase than the
// one the task's history shows it waits for.
//
// Every operation is a synchronising point: the task yields to the scheduler first, so any
// other task or the copy engine may run in between. Waits block the task (no busy loop) until
// the barrier's phase moves.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hopper/model/clock.hpp"
#include "hopper/model/mbarrier.hpp"
#include "hopper/model/scheduler.hpp"
#include "hopper/model/source_location.hpp"
#include "hopper/ptx/qualifiers.hpp"

namespace hopper::model {

// The .sem of an arrive (.release, the default in PTX, or .relaxed) or of a wait (.acquire, the
// default, or .relaxed): the PTX layer's own vocabulary, so a kernel written over a target names
// the same value on both machines. An operation given another value is reported.
using sem = ::hopper::ptx::sem;

class barrier {
 public:
  barrier(scheduler& s, int id, std::string name, int cta)
      : s_(s), id_(id), cta_(cta), key_(s.new_key()), obj_(s.new_objects()), st_(std::move(name)) {
    st_.set_owner("CTA " + std::to_string(cta));
  }
  barrier(const barrier&) = delete;
  barrier& operator=(const barrier&) = delete;

  int id() const { return id_; }
  int cta() const { return cta_; }
  const std::string& name() const { return st_.name(); }
  const mbarrier_state& state() const { return st_; }
  std::string describe() const { return st_.describe(); }

  // mbarrier.init.shared::cta.b64 [addr], count
  void init(uint32_t count) {
    const int t = enter("mbarrier.init", false);
    s_.touch(obj_, access::write);
    if (s_.task_cta(t) != cta_) st_.fail("mbarrier.init", s_.where_at(t) + " initialises a barrier of another CTA");
    st_.init(count);
    s_.notify(key_);
    init_task_ = t;
    init_loc_ = s_.loc(t);
    init_time_ = s_.tick();
    fence_init_time_ = async_fence_time_ = 0;
    last_arrive_.clear();
    last_wait_.clear();
    prev_ = cur_ = phase_events{};
    completed_ = hb_clock{};
    current_ = hb_clock{};
    s_.record("mbarrier.init", name(), [&] { return "count " + std::to_string(count); });
  }

  // mbarrier.arrive{.release|.relaxed}.shared::{cta|cluster}.b64 state, [addr], count
  // `sc`: the .scope; a .release.cta arrive on another CTA's barrier (.shared::cluster) orders
  // nothing for that CTA's threads, which lie outside its scope (PTX ISA, memory consistency
  // model: morally strong operations share a scope that contains both threads).
  mbarrier_token arrive(uint32_t count = 1, sem m = sem::release, ptx::scope sc = ptx::scope::cluster) {
    const int t = enter("mbarrier.arrive", true);
    return counted(
        t, "mbarrier.arrive", m, [&] { return st_.arrive(count); }, 0, sc);
  }
  // Lane task t's part of one warp instruction whose lanes arrive together (each on its own
  // barrier, as mbarrier.arrive.shared::cluster with lane r addressing CTA r), performed by the
  // current task with no scheduling point in between: `when` is t's time for it (its clock
  // already knows, in execution order, the other lanes' parts). See target::mbarrier_arrive_shared_cluster_lanes.
  void arrive_in_step(int t, uint64_t when, sem m) {
    const char* op = "mbarrier.arrive.shared::cluster";
    check_use(t, op);
    (void)counted(
        t, op, m, [&] { return st_.arrive(1); }, when);
  }
  // mbarrier.arrive.noComplete.shared::cta.b64 state, [addr], count
  mbarrier_token arrive_no_complete(uint32_t count, sem m = sem::release) {
    const int t = enter("mbarrier.arrive.noComplete", true);
    return counted(t, "mbarrier.arrive.noComplete", m, [&] { return st_.arrive(count, true); });
  }
  // mbarrier.arrive.expect_tx.shared::{cta|cluster}.b64 state, [addr], txCount
  mbarrier_token arrive_expect_tx(uint32_t bytes, sem m = sem::release, ptx::scope sc = ptx::scope::cluster) {
    const int t = enter("mbarrier.arrive.expect_tx", true);
    return counted(
        t, "mbarrier.arrive.expect_tx", m, [&] { return st_.arrive_expect_tx(bytes); }, 0, sc);
  }
  // mbarrier.arrive_drop.shared::cta.b64 state, [addr], count
  mbarrier_token arrive_drop(uint32_t count = 1, sem m = sem::release) {
    const int t = enter("mbarrier.arrive_drop", true);
    return counted(t, "mbarrier.arrive_drop", m, [&] { return st_.arrive_drop(count); });
  }
  // mbarrier.arrive_drop.noComplete.shared::cta.b64 state, [addr], count
  mbarrier_token arrive_drop_no_complete(uint32_t count, sem m = sem::release) {
    const int t = enter("mbarrier.arrive_drop.noComplete", true);
    return counted(t, "mbarrier.arrive_drop.noComplete", m, [&] { return st_.arrive_drop(count, true); });
  }
  // mbarrier.arrive_drop.expect_tx.shared::cta.b64 state, [addr], txCount
  mbarrier_token arrive_drop_expect_tx(uint32_t bytes, sem m = sem::release) {
    const int t = enter("mbarrier.arrive_drop.expect_tx", true);
    return counted(t, "mbarrier.arrive_drop.expect_tx", m, [&] { return st_.arrive_drop_expect_tx(bytes); });
  }
  // mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [addr], txCount
  void expect_tx(uint32_t bytes) {
    const int t = enter("mbarrier.expect_tx", true);
    check_phase_race(s_.clock(t), t, "mbarrier.expect_tx");
    cur_.add(t, s_.tick(), "mbarrier.expect_tx", s_.loc(t));
    changing("mbarrier.expect_tx", [&] { st_.expect_tx(bytes); });
  }
  // mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [addr], txCount, issued by a task
  void complete_tx(uint32_t bytes) {
    const int t = enter("mbarrier.complete_tx", true);
    check_phase_race(s_.clock(t), t, "mbarrier.complete_tx");
    cur_.add(t, s_.tick(), "mbarrier.complete_tx", s_.loc(t));
    changing("mbarrier.complete_tx", [&] { st_.complete_tx(bytes); });
  }

  // What the copy engine does when the bytes of a bulk copy issued by `issuer` land: complete_tx
  // on this barrier. Returns the phase the bytes were counted on (their visibility).
  // `issued_at` is the issuer's clock when it issued the copy: the completion comes after the
  // issue, so the phase it completes carries, in execution order, every phase the issuer knew to
  // be over (a multicast carries the same clock to every target). It carries no memory ordering
  // of the issuer's earlier accesses (PTX ISA: the implicit complete-tx is ordered only with the
  // copy's own memory operations); see clock.hpp.
  uint64_t complete_tx_from_async(uint32_t bytes, int issuer, const hb_clock& issued_at, const std::string& copy) {
    const char* op = "mbarrier.complete_tx (copy engine)";
    s_.touch(scheduler::cta_object(cta_), access::read);
    if (s_.cta_exited(cta_))
      st_.fail(op, copy + " completes bytes on a barrier whose CTA " + std::to_string(cta_) + " has exited");
    if (!st_.valid())
      st_.fail(op, copy + " completes bytes on a barrier that is not initialised (issuer " + s_.where(issuer) + ")");
    if (issued_at.of(init_task_) < async_fence_time_ || async_fence_time_ == 0)
      st_.fail(op, copy +
                       " uses the barrier through the async proxy "
                       "but its mbarrier.init by " +
                       init_by() +
                       " was not followed by that task's fence.mbarrier_init (or fence.proxy.async) "
                       "ordered before the copy" +
                       fence_by_other_note());
    check_phase_race(issued_at, -1, op, &copy);
    const uint64_t phase = st_.phase();
    cur_.copies += 1;
    if (cur_.copy.empty()) cur_.copy = copy;
    changing(op, [&] {
      st_.complete_tx(bytes);
      current_.join_execution_order(issued_at);  // after the state check: a rejected op leaves nothing
    });
    s_.record(op, name(), [&] { return copy + ", " + std::to_string(bytes) + " bytes"; });
    return phase;
  }

  // mbarrier.test_wait.parity.acquire.cta.shared::cta.b64 done, [addr], parity
  bool test_wait(uint32_t parity, sem m = sem::acquire) {
    return poll(parity, m, "mbarrier.test_wait.parity", false, false, true);
  }
  // mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 done, [addr], parity:
  // may return false although the phase completed (drawn from the seed in a random run; a
  // choice point, succeed or fail, while exploring every interleaving).
  bool try_wait(uint32_t parity, sem m = sem::acquire) { return poll(parity, m, kTryWait, true, true, true); }
  // The loop every kernel writes around try_wait.parity: blocks the task.
  // Its own polls fail spuriously only in random runs (exploring them would never end).
  void wait(uint32_t parity, sem m = sem::acquire) {
    while (!poll(parity, m, kTryWait, true, false, true, true)) {
      const uint64_t ph = st_.phase();
      s_.block_until([this, ph, parity] { return !st_.valid() || st_.phase() != ph || st_.test_wait_parity(parity); },
                     [this, parity] { return waiting_on(parity); }, key_);
    }
  }
  // mbarrier.test_wait.acquire.cta.shared::cta.b64 done, [addr], state
  bool test_wait(const mbarrier_token& tok, bool blocking = false) {
    const int t = enter("mbarrier.test_wait", true);
    const bool r = st_.test_wait_token(tok);
    if (!blocking || r) s_.touch(obj_, blocking ? access::acquire : access::read);
    if (r) {
      acquire(t);
      last_wait_[t] = int64_t(tok.phase);
      s_.note_wait(t, id_, &name(), int64_t(tok.phase), uint32_t(tok.phase & 1));
    }
    return r;
  }
  void wait(const mbarrier_token& tok) {
    while (!test_wait(tok, true)) {
      const uint64_t ph = st_.phase();
      s_.block_until([this, ph] { return !st_.valid() || st_.phase() != ph; },
                     [this, tok] {
                       return "the token of phase " + std::to_string(tok.phase) + " of " + describe() + exited_note();
                     },
                     key_);
    }
  }
  // A wait whose program knows the phase it means (a pipeline state): phase k must be the
  // current or the previous one, else the parity names another phase.
  void wait_phase(uint64_t k) {
    enter("mbarrier.try_wait.parity", false);
    st_.check_wait_phase(k);
    const uint32_t parity = uint32_t(k & 1);
    while (!poll(parity, sem::acquire, kTryWait, true, false, false, true)) {
      st_.check_wait_phase(k);
      const uint64_t ph = st_.phase();
      s_.block_until([this, ph, parity] { return !st_.valid() || st_.phase() != ph || st_.test_wait_parity(parity); },
                     [this, k] {
                       return "phase " + std::to_string(k) + " (parity " + std::to_string(k & 1) + ") of " +
                              describe() + exited_note();
                     },
                     key_);
    }
    last_wait_[s_.current()] = int64_t(k);
  }

  // mbarrier.pending_count.b64 count, state (PTX ISA)
  static uint32_t pending_count(const mbarrier_token& t) { return mbarrier_state::pending_count(t); }

  // mbarrier.inval.shared::cta.b64 [addr]
  void inval() {
    enter("mbarrier.inval", true);
    s_.touch(obj_, access::write);
    s_.tick();
    st_.inval();
    s_.notify(key_);
    s_.record("mbarrier.inval", name());
  }

  // fence.mbarrier_init.release.cluster by the current task: orders this task's
  // earlier inits before its later release operations, for other CTAs and the async proxy.
  void on_fence_mbarrier_init(int t, uint64_t now, bool proxy_async_only) {
    if (st_.valid() && init_time_ != 0 && init_task_ == t) {
      if (!proxy_async_only) fence_init_time_ = now;
      async_fence_time_ = now;
    } else if (!proxy_async_only && s_.task_cta(t) == cta_) {
      fence_other_ = t;  // remembered for the report, whether before or after the init
    }
  }

 private:
  // "; exited without arriving on phase n: threads 32-63 (warp 1) of CTA 0": the tasks that arrived
  // on an earlier phase and have ended (a thread that returned early skips its arrivals).
  std::string exited_note() const {
    std::vector<int> gone;
    for (const auto& [t, ph] : last_arrive_)
      if (ph < st_.phase() && s_.task_done(t)) gone.push_back(t);
    if (gone.empty()) return {};
    return "; exited without arriving on phase " + std::to_string(st_.phase()) + ": " + s_.tasks_named(gone);
  }
  std::string init_by() const { return s_.where(init_task_) + init_loc_.at(); }
  std::string fence_by_other_note() const {
    if (fence_other_ < 0) return "";
    return " (fence.mbarrier_init was issued by " + s_.where(fence_other_) +
           ", which did not initialise it: the fence orders only the issuing thread's inits)";
  }

  // try_wait.parity: `program_call` when the program itself called try_wait (then a spurious
  // failure is also a choice point of an exhaustive exploration).
  // `may_fail`: try_wait, which may return false although the phase completed (test_wait never
  // does). `history`: the task's history says which phase it waits for (check_wait_history);
  // false where the program names the phase itself (wait_phase).
  static constexpr const char* kTryWait = "mbarrier.try_wait.parity";
  // `blocking`: the poll of a wait loop (a failure only blocks the task; see access::acquire).
  bool poll(uint32_t parity, sem m, const char* op, bool may_fail, bool program_call, bool history,
            bool blocking = false) {
    check_sem(op, m, sem::acquire);
    s_.about_to_poll(obj_ * 2 + parity);
    const int t = enter(op, true);
    const bool complete = st_.test_wait_parity(parity);
    const bool r = complete && !(may_fail && s_.spurious(program_call));
    if (r)
      s_.touch(obj_, blocking ? access::acquire : access::read);
    else if (!blocking)
      s_.failed_poll(obj_, obj_ * 2 + parity);
    if (r) {
      acquire(t, m);
      if (history) check_wait_history(t, parity, int64_t(st_.phase()) - 1);
      s_.note_wait(t, id_, &name(), int64_t(st_.phase()) - 1, parity);
    }
    if (complete)
      s_.polled();
    else
      s_.polling([this, parity] { return waiting_on(parity); });
    return r;
  }
  // "parity p of barrier ... ; exited without arriving ...": what a waiter waits on.
  std::string waiting_on(uint32_t parity) const {
    return "parity " + std::to_string(parity) + " of " + describe() + exited_note();
  }

  // An arrive takes .release or .relaxed, a wait .acquire or .relaxed (PTX ISA, mbarrier.arrive
  // and mbarrier.test_wait/try_wait); the PTX layer rejects any other .sem at compile time.
  static void check_sem(const char* op, sem m, sem ordering) {
    if (m != ordering && m != sem::relaxed)
      scheduler::misuse(std::string(op) + ": .sem must be ." + (ordering == sem::release ? "release" : "acquire") +
                        " or .relaxed");
  }

  // Yield, then check what every use needs: a live CTA, an init ordered before this task.
  int enter(const char* op, bool use) {
    const int t = s_.current();
    s_.note(op, name());
    s_.yield();
    if (use) check_use(t, op);
    return t;
  }
  void check_use(int t, const char* op) const {
    // Whether the CTA has exited: only a peer CTA's thread can find it so.
    if (s_.task_cta(t) != cta_) s_.touch(scheduler::cta_object(cta_), access::read);
    if (s_.cta_exited(cta_))
      st_.fail(op, s_.where_at(t) + " uses a barrier whose CTA " + std::to_string(cta_) + " has exited");
    if (!st_.valid()) st_.fail(op, s_.where_at(t) + " uses a barrier that is not initialised (or was invalidated)");
    if (t != init_task_ && s_.clock(t).of(init_task_) < init_time_)
      st_.fail(op, s_.where_at(t) + " uses the barrier but its mbarrier.init by " + init_by() +
                       " is not ordered before this use (no synchronisation after the init)");
    if (s_.task_cta(t) != cta_ && (fence_init_time_ == 0 || s_.clock(t).of(init_task_) < fence_init_time_))
      st_.fail(op, s_.where_at(t) + " uses the barrier from another CTA but its mbarrier.init by " + init_by() +
                       " was not followed by that task's fence.mbarrier_init "
                       "ordered before this use" +
                       fence_by_other_note());
  }

  // `when`: the arrive's time in t's clock, already ticked (a lane's part of a warp instruction,
  // arrive_in_step); 0: tick now.
  template <class F>
  mbarrier_token counted(int t, const char* op, sem m, F&& f, uint64_t when = 0, ptx::scope sc = ptx::scope::cluster) {
    check_sem(op, m, sem::release);
    check_phase_race(s_.clock(t), t, op);
    // .release publishes this task's history into the phase; .relaxed only its place in
    // execution order (what it had observed is over, but none of its accesses are ordered).
    cur_.add(t, when ? when : s_.tick(), op, s_.loc(t));
    const bool out_of_scope = sc == ptx::scope::cta && s_.task_cta(t) != cta_;
    if (m == sem::release && !out_of_scope)
      current_.join(s_.clock(t));
    else
      current_.join_execution_order(s_.clock(t));
    mbarrier_token tok;
    changing(op, [&] { tok = f(); });
    last_arrive_[t] = tok.phase;
    s_.note_arrive(t, id_, &name(), op, tok.phase,
                   m != sem::release ? scheduler::orders::none_relaxed
                   : out_of_scope    ? scheduler::orders::none_out_of_scope
                                     : scheduler::orders::memory,
                   cta_);
    s_.record(op, name(),
              [&] { return "phase " + std::to_string(tok.phase) + ", pending before " + std::to_string(tok.pending); });
    return tok;
  }

  // A phase race (PTX ISA, mbarrier: an arrive-on operation is counted on the current phase):
  // an event counted on phase n >= 1 (an arrival, an expect_tx, a copy's complete_tx) whose
  // actor `c` (a task's clock, or the issuer's clock at the copy's issue) is not ordered after
  // every event counted on phase n-1 could, in another schedule, run before one of them and be
  // counted on phase n-1: its phase depends on the schedule. Knowing phase n-1 complete (a wait
  // observed it, directly or through synchronisation) orders it after all of them.
  void check_phase_race(const hb_clock& c, int actor, const char* op, const std::string* copy = nullptr) const {
    const uint64_t n = st_.phase();
    if (n == 0 || c.phases_over(id_) >= n) return;
    std::string other;
    for (const auto& [x, when] : prev_.tasks)
      if (c.exec_of(x) < when) {
        other = prev_.event_of(s_, x);
        break;
      }
    if (other.empty() && prev_.copies > 0) other = "the complete_tx of " + prev_.copy;
    if (other.empty()) return;
    const std::string who =
        copy ? "the complete_tx of " + *copy : std::string("the ") + op + " of " + s_.where_at(actor);
    throw model_error(error_kind::wrong_phase,
                      "phase race on " + describe() + ": " + who + " is counted on phase " + std::to_string(n) +
                          " but is not ordered after " + other + ", counted on phase " + std::to_string(n - 1) +
                          ": in another schedule it runs first and is counted on phase " + std::to_string(n - 1) +
                          (copy ? " (more bytes than the phase expects: its expect_tx is short)"
                                : " (an arrival for the next phase before a wait observed this one complete, or "
                                  "more arrivals per phase than the barrier's count)"));
  }

  // A wait's phase from the task's history (PTX ISA, mbarrier.test_wait/try_wait: .parity names
  // the current phase or the one before it): a task that waited on this barrier before waits for
  // a later phase of this parity (or the same one again); one that arrived since waits at least
  // for the phase of that arrival. The wait returns once a phase of the parity has completed;
  // `observed` is that phase. Reported: a wait that returns on a phase older than the one it
  // waits for (stale parity), or newer by two or more (the barrier ran ahead: the parity no
  // longer tells the phases apart).
  void check_wait_history(int t, uint32_t parity, int64_t observed) {
    const auto w = last_wait_.find(t);
    const auto a = last_arrive_.find(t);
    const bool waited = w != last_wait_.end();
    const bool arrived = a != last_arrive_.end() && (!waited || int64_t(a->second) > w->second);
    last_wait_[t] = observed;
    if (!waited && !arrived) return;
    const int64_t lo = arrived ? int64_t(a->second) : w->second;
    const bool same = parity_of(lo) == parity;
    const int64_t want = same ? lo : lo + 1;
    // The report's text, built only for one (every wait checks).
    const auto head = [&] {
      const std::string why = arrived ? "its arrival was counted on phase " + std::to_string(a->second)
                                      : "its last wait observed phase " + std::to_string(w->second);
      return s_.where_at(t) + " waits on parity " + std::to_string(parity) + " for phase " + std::to_string(want) +
             " (" + why + ")";
    };
    if (observed < want)
      throw model_error(error_kind::wrong_phase, "stale parity on " + describe() + ": " + head() +
                                                     ", but the wait returns at once on the completed phase " +
                                                     std::to_string(observed));
    if (!arrived && !same && observed >= want + 2)
      throw model_error(error_kind::wrong_phase,
                        "parity aliasing on " + describe() + ": " + head() + ", but phases up to " +
                            std::to_string(observed) +
                            " have completed: the barrier ran ahead of this waiter (count it on the barrier "
                            "that holds the producer back)");
  }
  static uint32_t parity_of(int64_t phase) { return uint32_t(phase & 1); }  // phase -1 has parity 1

  // Every change of the state: an update for partial-order reduction (see access) when the
  // phase keeps pending arrivals and the tx-count stays far inside its range (so that no order
  // of such changes completes the phase or overflows), else a write.
  template <class F>
  void changing(const char*, F&& f) {
    const uint64_t before = st_.phase();
    const int64_t tx_before = st_.tx_count();
    f();
    if (s_.tracking()) {
      constexpr int64_t far = int64_t(1) << 18;
      const int64_t tx = st_.tx_count(), delta = tx - tx_before;
      const bool update =
          st_.phase() == before && st_.pending() > 0 && tx <= far && tx >= -far && delta <= far && delta >= -far;
      s_.touch(obj_, update ? access::update : access::write);
    }
    if (st_.phase() != before) {
      completed_.join(current_);
      completed_.learn(id_, st_.phase());
      current_ = hb_clock{};
      prev_ = std::move(cur_);
      cur_ = phase_events{};
      s_.notify(key_);
      s_.record("phase complete", name(), [&] { return "phase " + std::to_string(before); });
    }
  }

  // .acquire: what was released into the completed phases becomes ordered before this task's
  // later accesses; .relaxed: only known to come before in execution order.
  void acquire(int t, sem m = sem::acquire) {
    if (m == sem::acquire)
      s_.clock(t).join(completed_);
    else
      s_.clock(t).join_execution_order(completed_);
  }

  scheduler& s_;
  int id_;
  int cta_;
  int key_;       // notified when the phase moves or the barrier is (in)validated: wakes its waiters
  uint64_t obj_;  // its object for partial-order reduction (scheduler::touch)
  mbarrier_state st_;
  int init_task_ = -1;
  src_loc init_loc_;
  uint64_t init_time_ = 0, fence_init_time_ = 0, async_fence_time_ = 0;
  int fence_other_ = -1;
  // The events counted on one phase: per task the time (its own clock) and form of its latest
  // one, and the copy-engine completions.
  struct phase_events {
    std::vector<std::pair<int, uint64_t>> tasks;
    std::vector<std::pair<const char*, src_loc>> ops;  // per task: its latest event's form and call site
    size_t copies = 0;
    std::string copy;  // the first copy counted, for a report
    void add(int t, uint64_t when, const char* op, const src_loc& loc) {
      for (size_t i = 0; i < tasks.size(); ++i)
        if (tasks[i].first == t) {
          tasks[i].second = when;
          ops[i] = {op, loc};
          return;
        }
      tasks.push_back({t, when});
      ops.push_back({op, loc});
    }
    // "the mbarrier.arrive of task 'x' (CTA 0) at file:line (function)"
    std::string event_of(const scheduler& s, int t) const {
      for (size_t i = 0; i < tasks.size(); ++i)
        if (tasks[i].first == t) return std::string("the ") + ops[i].first + " of " + s.where(t) + ops[i].second.at();
      return "the arrival of " + s.where(t);
    }
  };
  std::map<int, uint64_t> last_arrive_;  // task -> phase its last arrival was counted on
  std::map<int, int64_t> last_wait_;     // task -> phase its last wait observed (-1: the one before 0)
  phase_events prev_, cur_;              // events counted on the previous and the current phase
  hb_clock completed_;                   // released into every completed phase so far (an acquire joins it)
  hb_clock current_;                     // released into the current phase
};

}  // namespace hopper::model
