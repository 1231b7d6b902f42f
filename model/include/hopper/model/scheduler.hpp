// Warps as tasks under a seeded, deterministic scheduler.
//
// Each task is ordinary C++ (a std::function) running on its own stack as a coroutine; exactly one runs at a time and
// control returns to the scheduler only at the model's synchronising operations (arrive, wait, copy issue, fence, named
// barrier ...). At each such point the scheduler picks, from a seeded generator (or from a replayed prefix when
// exploring every interleaving), one of: a ready task, or a pending action of the asynchronous agents (the copy engine
// landing bytes, a bulk store finishing its read). A blocked task (a wait whose phase has not completed) is ready again
// only when its condition holds. When no task is ready and no agent has work while some task is still live, that is a
// deadlock, reported with each task, what it waits on and the barrier's counts. A step limit
// catches programs that spin forever; it reports where each task stopped.
//
// Why coroutines and not threads: a context switch is a few hundred nanoseconds on one core,
// so thousands of seeds run in seconds on a shared CI machine, and the order is exactly the
// scheduler's. Code that blocks in the model must do so through the model's operations; a
// task that loops forever without calling the model cannot be preempted (none of the model's
// programs do).
#pragma once
#if defined(__SANITIZE_ADDRESS__)
#define HOPPER_MODEL_ASAN_FIBERS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HOPPER_MODEL_ASAN_FIBERS 1
#endif
#endif
#if defined(HOPPER_MODEL_ASAN_FIBERS)
#include <sanitizer/common_interface_defs.h>
#endif
// On x86-64 a switch only exchanges stack pointers (detail::switch_stack); elsewhere, under
// AddressSanitizer, and in builds for control-flow enforcement (-fcf-protection defines __CET__:
// its indirect jump lands on no endbr64), it is swapcontext, which also saves the signal mask: a
// system call per switch.
#if defined(__x86_64__) && !defined(HOPPER_MODEL_ASAN_FIBERS) && !defined(__CET__)
#define HOPPER_MODEL_STACK_SWITCH 1
#else
#include <ucontext.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "hopper/model/clock.hpp"
#include "hopper/model/error.hpp"
#include "hopper/model/fault.hpp"
#include "hopper/model/source_location.hpp"

namespace hopper::model {

// ---- partial-order reduction (explore_por, explore.hpp) -------------------------------------
// What one step touched: an object (a barrier, a named barrier, a 4-byte word of a buffer, a
// task's bulk groups, a CTA's setup and exit) and how. Two steps of different processes are
// dependent when they touch one object and one of them writes it. A read leaves the object as it
// was; an update changes it so that two updates in either order, and a read before or after one,
// give the same results: an arrival (or a tx-count change) that leaves its phase with pending
// arrivals, which no wait can tell from none (the model's arrive token is the phase), or a
// thread exiting while its CTA still runs. Whatever completes a phase, a meeting or a CTA, or
// initialises or creates an object, writes it. An acquire is what a blocking wait does once its
// condition holds: it reads what the write it waited for made, and in the other order it would
// only block until that write (a failed poll of a blocking wait touches nothing).
//
// An update and the write after it (the completion of its phase) are ordered, never reversed:
// in the other order the same arrivals complete it and the state is the same. So are a write and
// an acquire after it.
enum class access : uint8_t { read, update, acquire, write };
struct touch_rec {
  uint64_t obj;
  access how;
};
inline bool conflict(access a, access b) { return a == access::write || b == access::write; }

// Who picks the next step when a program is explored with partial-order reduction: the
// processes are the tasks (their ids) and the copy engine's actions (ids the chooser gives).
class step_chooser {
 public:
  virtual ~step_chooser() = default;
  // The process to run among `procs` (enabled, in a fixed order): its index, or procs.size()
  // when every one of them is asleep (the run ends as redundant).
  virtual size_t pick(const std::vector<uint64_t>& procs) = 0;
  // A choice of one of n values inside the running step (a spurious try_wait failure).
  virtual size_t value(size_t n) = 0;
  // The step of `proc` is over; `touched` is what it touched; `spun`: it only polled in a spin
  // loop and found nothing (it only read, and it polls the same again next).
  virtual void stepped(uint64_t proc, const std::vector<touch_rec>& touched, bool spun) = 0;
  // The id of the `nth` action posted by process `parent` (stable across runs).
  virtual uint64_t agent(uint64_t parent, uint64_t nth) = 0;
  // Whether the run ended early, every enabled step asleep (its results are partial).
  virtual bool ended_early() const = 0;
};

struct run_options {
  uint64_t seed = 1;                    // drives every choice of a random run
  uint64_t step_limit = 1000000;        // scheduler picks before a step_limit report
  unsigned spurious_fail_percent = 20;  // try_wait returns false this often even when complete
  // While exploring every interleaving: at most this many spurious try_wait failures per run,
  // each a choice point at a try_wait the program calls itself (0: none; also none when
  // spurious_fail_percent is 0). Bounded so that a polling loop keeps the tree finite.
  unsigned explore_spurious_failures = 1;
  bool trace = false;  // keep every event (for Chrome trace JSON)
  // A schedule in which one CTA is slow: its tasks run only when no other task and no copy can
  // (-1: none). Schedules the seeds rarely draw, like a peer that finishes long after the others.
  int slow_cta = -1;
  size_t stack_bytes = 256 * 1024;  // each task's stack: 32 KiB to 64 MiB
  // Threads one world may run (every thread is a task with its own stack); a launch beyond it is
  // rejected by name rather than exhausting the host's memory.
  uint32_t max_threads = 16384;
  // explore_por: who picks the steps of a world made with these options (null: the seed does).
  step_chooser* chooser = nullptr;
  // Bugs to plant in the kernel as it runs (fault.hpp); none by default.
  std::vector<fault> faults = {};
};

// Throws model_error(api_misuse) naming a run_options field outside what the model can run.
inline void validate(const run_options& o) {
  const auto bad = [](const std::string& why) { throw model_error(error_kind::api_misuse, "run_options: " + why); };
  constexpr size_t min_stack = 32 * 1024, max_stack = size_t(64) << 20;
  if (o.stack_bytes < min_stack || o.stack_bytes > max_stack)
    bad("stack_bytes = " + std::to_string(o.stack_bytes) + " is outside " + std::to_string(min_stack) + ".." +
        std::to_string(max_stack) + " (a task's stack)");
  if (o.spurious_fail_percent > 100)
    bad("spurious_fail_percent = " + std::to_string(o.spurious_fail_percent) + " is outside 0..100");
  if (o.max_threads < 1 || o.max_threads > (1u << 20))
    bad("max_threads = " + std::to_string(o.max_threads) + " is outside 1..2^20");
  if (o.chooser && o.slow_cta >= 0) bad("slow_cta = " + std::to_string(o.slow_cta) + " with a step chooser");
}

struct trace_event {
  uint64_t step;  // scheduler time
  int task;       // -1: an asynchronous agent (copy engine)
  int cta;
  std::string op;      // PTX-like name of the operation
  std::string object;  // barrier or buffer name
  std::string detail;
};

namespace detail {
struct task_abort {};     // unwinds a task's stack when the run stops on a report
struct sleep_blocked {};  // ends a run whose every enabled step is asleep (explore_por)

#if defined(HOPPER_MODEL_STACK_SWITCH)
// A suspended coroutine: its stack pointer, at which lie its frame pointer and where it resumes.
struct context {
  void* sp = nullptr;
};
// Suspends the running code into `from` and resumes `to`. An opaque call (never inlined, and for
// GCC no interprocedural register allocation, which would let callers keep values in registers
// this function leaves alone but the code it switches to does not), so the caller keeps nothing
// in caller-saved registers across it; the callee-saved ones are saved by the prologue this
// clobber list gives the function, except the frame pointer, pushed here. The red zone below the
// stack pointer is stepped over first: a leaf function may keep data there. A fresh context
// (start_stack) finds its argument in the frame pointer slot, moved to rdi. The x87 and MXCSR
// control words are not switched: the model's tasks do not change them.
#if defined(__clang__)
__attribute__((noinline))
#else
__attribute__((noipa))
#endif
inline void
switch_stack(context* from, const context* to) {
  void* to_sp = to->sp;
  asm volatile(
      "subq $128, %%rsp\n\t"
      "leaq 1f(%%rip), %%rax\n\t"
      "pushq %%rax\n\t"
      "pushq %%rbp\n\t"
      "movq %%rsp, (%%rdi)\n\t"
      "movq %%rsi, %%rsp\n\t"
      "popq %%rbp\n\t"
      "popq %%rax\n\t"
      "movq %%rbp, %%rdi\n\t"
      "jmpq *%%rax\n\t"
      "1:\n\t"
      "addq $128, %%rsp\n\t"
      : "+D"(from), "+S"(to_sp)
      :
      : "rax", "rbx", "rcx", "rdx", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "memory", "cc");
}
// A context that, when first switched to, calls fn(arg) on the stack [base, base + bytes); fn
// must never return (it switches away for good instead).
inline context start_stack(char* base, size_t bytes, void (*fn)(void*), void* arg) {
  auto top = (reinterpret_cast<uintptr_t>(base) + bytes) & ~uintptr_t(15);
  auto* slot = reinterpret_cast<uintptr_t*>(top);
  slot[-1] = 0;                                 // fn's return address: none (ends a backtrace)
  slot[-2] = reinterpret_cast<uintptr_t>(fn);   // where switch_stack jumps
  slot[-3] = reinterpret_cast<uintptr_t>(arg);  // popped as the frame pointer, moved to rdi
  return context{slot - 3};
}
#else
using context = ucontext_t;
#endif
}  // namespace detail

class scheduler {
 public:
  explicit scheduler(run_options o = {}) : opt_(o), rng_(o.seed * 0x9E3779B97F4A7C15ull + 1), chooser_(o.chooser) {
    validate(o);
  }

  // Whether the run ended because every enabled step was asleep (explore_por).
  bool sleep_blocked() const { return blocked_; }

  // ---- footprints of steps (explore_por) ----------------------------------------------------
  // Object ids, fixed by the program's order of creation: n consecutive ones.
  uint64_t new_objects(uint64_t n = 1) {
    const uint64_t b = next_object_;
    next_object_ += n;
    return b;
  }
  // The object of CTA c's exit (a thread's exit updates it, the last one writes it).
  static uint64_t cta_object(int c) { return (uint64_t(1) << 62) + uint64_t(c); }
  // The object of CTA c's setup: its shared objects and buffers, made on first use, as a peer CTA
  // finds them (its own threads find them made, whoever made them: no step of theirs reads it).
  static uint64_t setup_object(int c) { return (uint64_t(1) << 62) + (uint64_t(1) << 40) + uint64_t(c); }
  // The object of warpgroup wg of CTA c's tensor core (fixed, whichever thread meets first).
  static uint64_t wgmma_object(int c, uint32_t wg) {
    return (uint64_t(1) << 62) + (uint64_t(2) << 40) + uint64_t(c) * 64 + wg;
  }
  // The bulk groups of task t (its wait_group and the copy engine's retirements).
  static uint64_t groups_object(int t) { return (uint64_t(1) << 61) + uint64_t(t); }
  bool tracking() const { return chooser_ != nullptr; }
  void touch(uint64_t obj, access how) {
    if (chooser_) footprint_.push_back({obj, how});
  }
  // A poll of object `obj` (its `key`: the object and what it polls for) by the program found
  // nothing: a read, unless the task's next operation polls the same key at the same call site
  // (a spin loop: in another order the loop would only spin more or less; see access::acquire).
  void failed_poll(uint64_t obj, uint64_t key) {
    if (!chooser_ || current_ < 0) return;
    failed_ = {true, obj, key, tasks_[size_t(current_)]->loc};
  }
  // The current task is about to poll `key` (before its scheduling point).
  void about_to_poll(uint64_t key) {
    if (chooser_) next_poll_ = key;
  }
  virtual ~scheduler() = default;
  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;

  const run_options& options() const { return opt_; }

  // Adds a task (a warp, or the elected thread of one) of CTA `cta`; returns its id.
  int spawn(std::string name, std::function<void()> body, int cta = 0) {
    if (running_) misuse("spawn('" + name + "') while the program runs");
    if (!body) misuse("spawn('" + name + "') with an empty body");
    if (cta < 0) misuse("spawn('" + name + "') with CTA " + std::to_string(cta));
    auto t = std::make_unique<task>();
    t->id = int(tasks_.size());
    t->name = std::move(name);
    t->cta = cta;
    t->body = std::move(body);
    t->clock.tick(t->id);
    tasks_.push_back(std::move(t));
    slots_.emplace_back();
    return tasks_.back()->id;
  }

  // Runs every task to its end; throws model_error on the first report (deadlock, hazard,
  // undefined behaviour, step limit), after unwinding every task.
  void run() {
    if (running_) misuse("run() called again while running");
    if (ran_) misuse("run() called twice on one program (make a fresh world per run)");
    running_ = ran_ = true;
    for (auto& t : tasks_) ready_set_.push_back(t->id);
    std::vector<uint64_t> procs;
    try {
      for (;;) {
        wake();
        // The tasks that may run: the ready set itself, or without a slow CTA's when anything
        // else can run.
        const std::vector<int>* runnable = &ready_set_;
        if (opt_.slow_cta >= 0) {
          size_t fast = 0;
          for (int id : ready_set_) fast += tasks_[size_t(id)]->cta != opt_.slow_cta;
          if (fast > 0 || !agents_.empty()) {
            ready_.clear();
            for (int id : ready_set_)
              if (tasks_[size_t(id)]->cta != opt_.slow_cta) ready_.push_back(id);
            runnable = &ready_;
          }
        }
        const std::vector<int>& ready = *runnable;
        const size_t n = ready.size() + agents_.size();
        if (n == 0) {
          if (live_tasks() == 0) break;
          report_deadlock();
        }
        // Every task that can run only polls barriers whose phase is incomplete, and has done
        // nothing else since the last event of any task or of the copy engine: no task can make
        // progress (a try_wait loop that never succeeds is a deadlock, not a step limit).
        if (agents_.empty() && !ready.empty() && std::all_of(ready.begin(), ready.end(), [this](int id) {
              const task& k = *tasks_[size_t(id)];
              return slots_[size_t(k.id)].status == state::ready && k.polls && k.poll_event == events_;
            }))
          report_deadlock(true);
        if (++steps_ > opt_.step_limit) report_step_limit();
        size_t k;
        if (chooser_) {
          procs.clear();
          for (int id : ready) procs.push_back(uint64_t(id));
          for (const agent& a : agents_) procs.push_back(a.proc);
          k = chooser_->pick(procs);
          if (k >= n) throw detail::sleep_blocked{};
          step_proc_ = procs[k];
          footprint_.clear();
          failed_.pending = false;
          next_poll_ = ~uint64_t(0);
          in_step_ = true;
        } else {
          k = choose(n);
        }
        if (k < ready.size()) {
          const int id = ready[k];
          // It stays in the ready set while it runs (nothing else changes the set before it is
          // settled), and most often it is ready again after.
          const size_t at =
              runnable == &ready_set_
                  ? k
                  : size_t(std::lower_bound(ready_set_.begin(), ready_set_.end(), id) - ready_set_.begin());
          resume(*tasks_[size_t(id)]);
          settle_ran(id, at);
        } else {
          auto action = std::move(agents_[k - ready.size()]);
          agents_.erase(agents_.begin() + long(k - ready.size()));
          ++events_;
          action.run();
        }
        end_step();
      }
    } catch (const detail::sleep_blocked&) {
      abort_all();
      running_ = false;
      blocked_ = true;
      return;
    } catch (...) {
      end_step();
      abort_all();
      running_ = false;
      throw;
    }
    running_ = false;
  }

  // ---- for the model's operations ---------------------------------------------------------
  bool in_task() const { return current_ >= 0; }
  int current() const {
    if (current_ < 0) misuse("a task operation called outside any task (from the scheduler or the host)");
    return current_;
  }
  size_t task_count() const { return tasks_.size(); }
  const std::string& task_name(int t) const { return tasks_.at(size_t(t))->name; }
  int task_cta(int t) const { return tasks_.at(size_t(t))->cta; }
  hb_clock& clock(int t) { return tasks_.at(size_t(t))->clock; }
  uint64_t steps() const { return steps_; }
  bool cta_exited(int cta) const { return exited_.count(cta) != 0; }

  // A new event of the current task; returns its time in the task's own clock.
  uint64_t tick() {
    task& t = *tasks_[size_t(current())];
    t.clock.tick(t.id);
    ++events_;
    return t.clock.of(t.id);
  }

  // A change of the model's state that is no event of a task's clock (a warpgroup's meeting
  // completing): blocked tasks' conditions are evaluated again (ready_now).
  void changed() { ++events_; }

  // An object whose changes wake its waiters (a barrier's phase, a named barrier's generation).
  int new_key() {
    keys_.push_back(0);
    waiters_.emplace_back();
    return int(keys_.size()) - 1;
  }
  void notify(int key) {
    ++keys_.at(size_t(key));
    ++events_;
    auto& w = waiters_.at(size_t(key));
    woken_.insert(woken_.end(), w.begin(), w.end());
    w.clear();
  }

  // The current task's poll (try_wait) found its phase incomplete: what it polls, for a report
  // if nothing else happens any more (a polling loop with no progress possible is a deadlock).
  void polling(std::function<std::string()> what) {
    task& k = *tasks_[size_t(current())];
    k.polls = std::move(what);
    k.poll_event = events_;
  }
  void polled() { tasks_[size_t(current())]->polls = nullptr; }
  bool task_done(int t) const { return slots_.at(size_t(t)).status == state::done; }

  // Tasks by name, grouped: "threads 32-159 (warps 1-4)" for the threads of one CTA of a
  // launch, else their names ("task 'a', task 'b'"), at most 8 then a count.
  std::string tasks_named(const std::vector<int>& ids) const {
    std::vector<unsigned> threads;
    std::set<unsigned> warps;
    bool launch = !ids.empty();
    for (int id : ids) {
      unsigned th = 0, wp = 0, ln = 0;
      if (std::sscanf(tasks_.at(size_t(id))->name.c_str(), "thread %u (warp %u lane %u)", &th, &wp, &ln) != 3 ||
          tasks_.at(size_t(id))->cta != tasks_.at(size_t(ids[0]))->cta) {
        launch = false;
        break;
      }
      threads.push_back(th);
      warps.insert(wp);
    }
    std::ostringstream o;
    if (launch) {
      std::sort(threads.begin(), threads.end());
      o << (threads.size() == 1 ? "thread " : "threads ") << ranges(threads);
      std::vector<unsigned> w(warps.begin(), warps.end());
      o << " (" << (w.size() == 1 ? "warp " : "warps ") << ranges(w);
      if (threads.size() > 1) o << ", " << threads.size() << " threads";
      o << ") of CTA " << tasks_.at(size_t(ids[0]))->cta;
      return o.str();
    }
    for (size_t i = 0; i < ids.size() && i < 8; ++i) o << (i ? ", " : "") << where(ids[i]);
    if (ids.size() > 8) o << " and " << ids.size() - 8 << " more";
    return o.str();
  }

  // A synchronising point: the scheduler may run anything else before this task goes on.
  void yield() {
    task& t = *tasks_[size_t(current())];
    if (aborting_) throw detail::task_abort{};
    slots_[size_t(t.id)].status = state::ready;
    to_main(t);
    if (aborting_) throw detail::task_abort{};
  }

  // Blocks the current task until `ready()` holds; `what()` names what it waits on (barrier,
  // parity, counts) for a deadlock report. `key` (from new_key), if given, is the one object
  // ready() depends on: it is evaluated again only after a notify(key).
  void block_until(std::function<bool()> ready, std::function<std::string()> what, int key = -1) {
    task& t = *tasks_[size_t(current())];
    if (aborting_) throw detail::task_abort{};
    t.ready_fn = std::move(ready);
    t.what_fn = std::move(what);
    slot& k = slots_[size_t(t.id)];
    k.ready_epoch = ~uint64_t(0);
    k.key = key;
    k.status = state::blocked;
    to_main(t);
    t.ready_fn = nullptr;
    t.what_fn = nullptr;
    if (aborting_) throw detail::task_abort{};
  }

  // Work of an asynchronous agent (the copy engine): runs later, at a point the scheduler picks.
  void post_async(std::string what, std::function<void()> action) {
    uint64_t proc = 0;
    if (chooser_) {
      const uint64_t parent = current_ >= 0 ? uint64_t(current_) : step_proc_;
      proc = chooser_->agent(parent, posts_[parent]++);
    }
    agents_.push_back(agent{std::move(what), std::move(action), proc});
  }
  size_t pending_async() const { return agents_.size(); }

  // A choice among n alternatives: seeded in a random run, replayed while exploring.
  size_t choose(size_t n) {
    if (n <= 1) return 0;
    if (chooser_) {
      const size_t v = chooser_->value(n);
      if (v >= n) misuse("a chosen value " + std::to_string(v) + " of " + std::to_string(n));
      return v;
    }
    size_t k;
    if (pos_ < replay_.size()) {
      k = replay_[pos_];
      if (k >= n)
        misuse("replayed choice " + std::to_string(k) + " of " + std::to_string(n) +
               ": the program is not deterministic");
    } else {
      k = exhaustive_ ? 0 : size_t(next_random() % n);
    }
    ++pos_;
    made_.push_back({k, n});
    return k;
  }

  // try_wait may return false although the phase completed (PTX ISA: a time limit). In a
  // random run, drawn from the seed. While exploring every interleaving, a choice point (0:
  // succeed, 1: fail) only where the program itself calls try_wait (`choice_point`), and only
  // while the run has used fewer than explore_spurious_failures; the wait loops' own polls
  // never fail there (a failure that is retried at once would make the tree infinite).
  bool spurious(bool choice_point) {
    if (opt_.spurious_fail_percent == 0) return false;
    if (!exhaustive_ && !chooser_) return next_random() % 100 < opt_.spurious_fail_percent;
    if (!choice_point || spurious_used_ >= opt_.explore_spurious_failures) return false;
    const bool fail = choose(2) == 1;
    spurious_used_ += fail;
    return fail;
  }

  void set_exhaustive(std::vector<size_t> prefix) {
    exhaustive_ = true;
    replay_ = std::move(prefix);
  }
  const std::vector<std::pair<size_t, size_t>>& choices_made() const { return made_; }

  // ---- releases and waits, for a WAR report ---------------------------------------------------
  // The last `kept_arrives` arrives on mbarriers, each with the arriving task's clock, and every
  // task's last `kept_waits` successful waits. A write over bytes another task may still read
  // is then explained by the writer's last wait before the write (the phase it returned on, its
  // call site) and by the arrive that came after the read.
  static constexpr size_t kept_arrives = 1024, kept_waits = 32;
  // What an arrive orders for the barrier's waiters: the arriving task's memory (.release in
  // scope), or nothing (.relaxed; .release.cta on another CTA's barrier).
  enum class orders { memory, none_relaxed, none_out_of_scope };
  // Task t's arrive `op` on mbarrier `bar` of CTA `bar_cta`, counted on `phase`.
  void note_arrive(int t, int bar, const std::string* bar_name, const char* op, uint64_t phase, orders o, int bar_cta) {
    task& k = *tasks_.at(size_t(t));
    if (arrives_.size() == kept_arrives) arrives_.erase(arrives_.begin(), arrives_.begin() + kept_arrives / 2);
    arrives_.push_back({t, bar, bar_cta, bar_name, op, phase, o, k.loc, k.clock});
  }
  // Task t's wait on mbarrier `bar` returned on the completed phase `observed` (-1: the phase
  // before the first, complete for parity 1).
  void note_wait(int t, int bar, const std::string* bar_name, int64_t observed, uint32_t parity) {
    if (waits_.size() <= size_t(t)) waits_.resize(size_t(t) + 1);
    std::vector<wait_rec>& w = waits_[size_t(t)];
    if (w.size() == kept_waits) w.erase(w.begin(), w.begin() + kept_waits / 2);
    const task& k = *tasks_.at(size_t(t));
    w.push_back({bar, bar_name, observed, parity, k.clock.of(t), k.loc});
  }
  // Why `writer` (at time `at` of its own clock) is not ordered after `reader`'s event at time
  // `when`, as a phrase naming barriers and call sites. The event is a generic read (`generic`:
  // then only a .release arrive after it orders it) or the wait that retired an asynchronous read
  // (execution order is enough). In order of precedence:
  // - an arrive after the read that orders no memory, counted on the phase the writer's last wait
  //   observed (the release is .relaxed or out of scope);
  // - the writer's last wait, when it returned on a phase older than that of the read's release on
  //   the same barrier, or before any release came (a stale parity, a missing wait);
  // - an arrive that orders no memory on another barrier the writer waited through;
  // - the read's first release and what the writer knew of its barrier.
  // Empty when nothing is known.
  static constexpr const char* stage_rule =
      "a stage is released after its last read, and refilled only after the writer waited for every reader's "
      "release";
  std::string unordered_why(int reader, uint64_t when, int writer, uint64_t at, bool generic) const {
    const wait_rec* last = last_wait(writer, at, -1);
    const auto after_read = [&](const arrive_rec& a) { return a.knew.of(reader) >= when; };
    const auto relaxed_text = [&](const arrive_rec& a, const wait_rec& w) {
      return "the " + std::string(a.op) + " on barrier " + *a.bar_name + " by " + where(a.task) + a.loc.at() +
             " after this read, counted on the phase this writer's wait" + w.loc.at() + " observed, was " +
             (a.o == orders::none_relaxed
                  ? std::string(".relaxed, which orders no memory (a stage read with generic loads is released "
                                "with .release)")
                  : ".release.cta on a barrier of CTA " + std::to_string(a.bar_cta) +
                        ", whose threads lie outside its scope: it orders no memory for them (use .cluster)");
    };
    const auto release_text = [&](const arrive_rec& a) {
      return "the " + std::string(a.op) + " on barrier " + *a.bar_name + " by " + where(a.task) + a.loc.at() +
             ", counted on phase " + std::to_string(a.phase);
    };
    const auto wait_text = [&](const wait_rec& w) {
      return "on barrier " + *w.bar_name + w.loc.at() + " (parity " + std::to_string(w.parity) + "), " +
             returned_on(w.observed);
    };
    if (generic && last)
      for (const arrive_rec& a : arrives_)
        if (a.o != orders::memory && a.bar == last->bar && int64_t(a.phase) <= last->observed && after_read(a))
          return relaxed_text(a, *last);
    const arrive_rec* same = nullptr;
    const arrive_rec* first = nullptr;
    for (const arrive_rec& a : arrives_) {
      if ((generic && a.o != orders::memory) || !after_read(a)) continue;
      if (!first) first = &a;
      if (last && a.bar == last->bar && int64_t(a.phase) > last->observed) {
        same = &a;
        break;
      }
    }
    if (last && same)
      return "this writer's last wait before the write, " + wait_text(*last) + ", but that read was released by " +
             release_text(*same) + ": the write needs a wait for phase " + std::to_string(same->phase) + " (parity " +
             std::to_string(same->phase & 1) + ")";
    if (last && !first)
      return std::string(stage_rule) +
             ": no release ordered after that read has come yet, and this writer's last "
             "wait before the write, " +
             wait_text(*last);
    if (generic)
      for (const arrive_rec& a : arrives_) {
        if (a.o == orders::memory || !after_read(a)) continue;
        const wait_rec* w = last_wait(writer, at, a.bar);
        if (w && w->observed >= int64_t(a.phase)) return relaxed_text(a, *w);
      }
    if (!first) return {};
    const wait_rec* w = last_wait(writer, at, first->bar);
    return std::string(stage_rule) + ": that read's first release is " + release_text(*first) + ", and this writer " +
           (w ? "last waited " + wait_text(*w) : std::string("has not waited on that barrier"));
  }

  // ---- trace ------------------------------------------------------------------------------
  // The current task's operation `op` on `object`: where it is (a report's "last at") and, when
  // tracing, an event whose detail is detail(), built only then (most runs trace nothing, and
  // every operation records).
  template <class Detail>
  void record(std::string_view op, std::string_view object, const Detail& detail) {
    note(op, object);
    if (opt_.trace)
      trace_.push_back({steps_, current_, current_ >= 0 ? tasks_[size_t(current_)]->cta : -1, std::string(op),
                        std::string(object), detail()});
  }
  void record(std::string_view op, std::string_view object) {
    record(op, object, [] { return std::string(); });
  }
  // Where the current task is, for a step-limit report (no trace event). Written in place: the
  // string keeps its buffer from one operation to the next.
  void note(std::string_view op, std::string_view object) {
    if (current_ < 0) return;
    std::string& last = tasks_[size_t(current_)]->last;
    last.assign(op);
    last += ' ';
    last += object;
  }
  const std::vector<trace_event>& trace() const { return trace_; }

  // Chrome trace JSON (chrome://tracing, Perfetto): one row per task, one per CTA's agents.
  void write_chrome_trace(std::ostream& o) const {
    o << "{\"traceEvents\":[\n";
    bool first = true;
    auto sep = [&] {
      o << (first ? "" : ",\n");
      first = false;
    };
    for (auto& t : tasks_) {
      sep();
      o << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" << t->cta << ",\"tid\":" << t->id
        << ",\"args\":{\"name\":\"" << escape(t->name) << "\"}}";
    }
    for (auto& e : trace_) {
      sep();
      o << "{\"name\":\"" << escape(e.op) << "\",\"cat\":\"" << escape(e.object) << "\",\"ph\":\"X\",\"ts\":" << e.step
        << ",\"dur\":1,\"pid\":" << (e.cta < 0 ? 0 : e.cta) << ",\"tid\":" << (e.task < 0 ? 1000 : e.task)
        << ",\"args\":{\"object\":\"" << escape(e.object) << "\",\"detail\":\"" << escape(e.detail) << "\"}}";
    }
    o << "\n]}\n";
  }

  [[noreturn]] static void misuse(const std::string& why) { throw model_error(error_kind::api_misuse, why); }

  std::string where(int t) const {
    const task& k = *tasks_.at(size_t(t));
    return "task '" + k.name + "' (CTA " + std::to_string(k.cta) + ")";
  }
  // where(t) and the call site of t's operation in progress (for the acting task of a report).
  std::string where_at(int t) const { return where(t) + tasks_.at(size_t(t))->loc.at(); }

  // ---- call sites -------------------------------------------------------------------------
  // The call site of the current task's next operation (a target member's caller). Ignored while
  // a caller further out has pinned its own (the pipeline's callers: pin, then the backend's
  // members, then unpin).
  void at(const src_loc& l) {
    if (current_ < 0) return;
    task& k = *tasks_[size_t(current_)];
    if (!k.pinned) k.loc = l;
  }
  void pin(const src_loc& l) {
    if (current_ < 0) return;
    task& k = *tasks_[size_t(current_)];
    k.loc = l;
    k.pinned = true;
  }
  void unpin() {
    if (current_ >= 0) tasks_[size_t(current_)]->pinned = false;
  }
  const src_loc& loc(int t) const { return tasks_.at(size_t(t))->loc; }

 private:
  enum class state { ready, running, blocked, done };
  // What the scheduler reads of every live task at every step, in one dense array (slots_): the
  // tasks themselves are large and scattered, and a step must not touch each of them.
  struct slot {
    state status = state::ready;
    int key = -1;              // the object ready_fn depends on (block_until)
    uint64_t ready_epoch = 0;  // events_ (or its key's count) when ready_fn was last evaluated
    bool ready_cached = false;
  };
  struct task {
    int id = 0;
    int cta = 0;
    bool started = false;
    bool pinned = false;                 // loc set by a caller further out (see at)
    uint64_t poll_event = 0;             // events_ when its last poll found an incomplete phase
    std::function<std::string()> polls;  // what that poll found incomplete (see polling)
    std::function<bool()> ready_fn;
    std::string name;
    std::function<void()> body;
    detail::context ctx{};
    std::unique_ptr<char[]> stack;
    std::function<std::string()> what_fn;
    std::string last = "start";
    hb_clock clock;
    src_loc loc;  // the call site of its operation in progress
  };
  struct agent {
    std::string what;
    std::function<void()> action;
    uint64_t proc = 0;  // its process id under a step_chooser
    void run() { action(); }
  };

  void end_step() {
    if (!in_step_) return;
    in_step_ = false;
    bool spin = false;
    if (failed_.pending) {
      spin = current_ < 0 && step_proc_ < tasks_.size() && next_poll_ == failed_.key &&
             slots_[size_t(step_proc_)].status == state::ready &&
             same_site(tasks_[size_t(step_proc_)]->loc, failed_.loc);
      if (!spin) footprint_.push_back({failed_.obj, access::read});
      failed_.pending = false;
    }
    chooser_->stepped(step_proc_, footprint_,
                      spin && std::all_of(footprint_.begin(), footprint_.end(),
                                          [](const touch_rec& r) { return r.how == access::read; }));
  }

#if defined(HOPPER_MODEL_STACK_SWITCH)
  static void entry(void* p) {
    auto* self = static_cast<scheduler*>(p);
#else
  static void entry(unsigned lo, unsigned hi) {
    auto* self = reinterpret_cast<scheduler*>((uintptr_t(hi) << 32) | uintptr_t(lo));
#endif
    task& t = *self->tasks_[size_t(self->current_)];
    self->arrived_on_task(nullptr);
    try {
      t.body();
    } catch (const detail::task_abort&) {
    } catch (const model_error&) {
      if (!self->error_) self->error_ = std::current_exception();
    } catch (const std::exception& e) {  // the kernel body's own: name the thread it came from
      if (!self->error_)
        self->error_ =
            std::make_exception_ptr(model_error(error_kind::api_misuse, self->where_at(t.id) + " threw " + e.what()));
    } catch (...) {
      if (!self->error_)
        self->error_ = std::make_exception_ptr(model_error(
            error_kind::api_misuse, self->where_at(t.id) + " threw an exception that is not a std::exception"));
    }
    self->slots_[size_t(t.id)].status = state::done;
    self->leaving_task_for_good();
#if defined(HOPPER_MODEL_STACK_SWITCH)
    detail::switch_stack(&t.ctx, &self->main_);  // never resumed: its stack is freed
    __builtin_unreachable();
#endif
    // returns through uc_link to the scheduler
  }

  // Every switch between the scheduler's stack and a task's goes through these, so that
  // AddressSanitizer knows which stack is live (its fiber interface); without ASan they are
  // plain switches.
  void to_task(task& t) {
#if defined(HOPPER_MODEL_ASAN_FIBERS)
    void* fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, t.stack.get(), opt_.stack_bytes);
    swapcontext(&main_, &t.ctx);
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#elif defined(HOPPER_MODEL_STACK_SWITCH)
    detail::switch_stack(&main_, &t.ctx);
#else
  swapcontext(&main_, &t.ctx);
#endif
  }
  void to_main(task& t) {
#if defined(HOPPER_MODEL_ASAN_FIBERS)
    void* fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, main_stack_, main_stack_size_);
    swapcontext(&t.ctx, &main_);
    arrived_on_task(fake);
#elif defined(HOPPER_MODEL_STACK_SWITCH)
    detail::switch_stack(&t.ctx, &main_);
#else
  swapcontext(&t.ctx, &main_);
#endif
  }
  void arrived_on_task([[maybe_unused]] void* fake) {
#if defined(HOPPER_MODEL_ASAN_FIBERS)
    __sanitizer_finish_switch_fiber(fake, &main_stack_, &main_stack_size_);
#endif
  }
  void leaving_task_for_good() {
#if defined(HOPPER_MODEL_ASAN_FIBERS)
    __sanitizer_start_switch_fiber(nullptr, main_stack_, main_stack_size_);
#endif
  }

  void resume(task& t) {
    if (!t.started) {
      t.started = true;
      t.stack.reset(new char[opt_.stack_bytes]);
#if defined(HOPPER_MODEL_STACK_SWITCH)
      // The stacks are as large as each other and page-aligned, so their tops, where a suspended
      // task's frames are, would all fall into the same cache sets: each starts a few lines lower.
      const size_t stagger = size_t(t.id % 61) * 64;
      t.ctx = detail::start_stack(t.stack.get(), opt_.stack_bytes - stagger, &scheduler::entry, this);
#else
      getcontext(&t.ctx);
      t.ctx.uc_stack.ss_sp = t.stack.get();
      t.ctx.uc_stack.ss_size = opt_.stack_bytes;
      t.ctx.uc_link = &main_;
      const auto p = uintptr_t(this);
      makecontext(&t.ctx, reinterpret_cast<void (*)()>(&scheduler::entry), 2, unsigned(p & 0xffffffffu),
                  unsigned(p >> 32));
#endif
    }
    current_ = t.id;
    slots_[size_t(t.id)].status = state::running;
    to_task(t);
    current_ = -1;
    if (slots_[size_t(t.id)].status == state::done) {
      t.stack.reset();
      on_task_done(t);
    }
    if (error_) {
      auto e = error_;
      error_ = nullptr;
      std::rethrow_exception(e);
    }
  }

  // A blocked task's condition depends only on the model's state, which changes only through
  // events (ticks, copy-engine actions, tasks ending): evaluated again only after one.
  // The ready set (ready_set_, ids in order) is kept as tasks change state, so that a step costs
  // what changed, not the number of tasks: a task that ran is settled (ready again, or waiting on
  // its key, or on any event when it has none); waiters of a notified key, and after any event
  // the waiters without a key, are checked again. A blocked task's condition, once true, stays
  // true (phases, generations and retired groups only move forward).
  void settle(int id) {
    slot& k = slots_[size_t(id)];
    if (k.status == state::ready) {
      insert_ready(id);
    } else if (k.status == state::blocked) {
      if (ready_now(id, k))
        insert_ready(id);
      else if (k.key >= 0)
        waiters_[size_t(k.key)].push_back(id);
      else
        unkeyed_.push_back(id);
    }
  }
  // settle() for the task that just ran, at position `at` of the ready set.
  void settle_ran(int id, size_t at) {
    slot& k = slots_[size_t(id)];
    if (k.status == state::ready || (k.status == state::blocked && ready_now(id, k))) return;
    ready_set_.erase(ready_set_.begin() + long(at));
    if (k.status == state::blocked) (k.key >= 0 ? waiters_[size_t(k.key)] : unkeyed_).push_back(id);
  }
  void wake() {
    if (!woken_.empty()) {
      woken_now_.swap(woken_);
      for (int id : woken_now_) settle(id);
      woken_now_.clear();
    }
    if (!unkeyed_.empty() && unkeyed_epoch_ != events_) {
      unkeyed_epoch_ = events_;
      std::vector<int> still;
      for (int id : unkeyed_) {
        if (ready_now(id, slots_[size_t(id)]))
          insert_ready(id);
        else
          still.push_back(id);
      }
      unkeyed_.swap(still);
    }
  }
  void insert_ready(int id) { ready_set_.insert(std::lower_bound(ready_set_.begin(), ready_set_.end(), id), id); }

  bool ready_now(int id, slot& k) {
    const uint64_t epoch = k.key >= 0 ? keys_[size_t(k.key)] : events_;
    if (k.ready_epoch != epoch) {
      k.ready_cached = tasks_[size_t(id)]->ready_fn();
      k.ready_epoch = epoch;
    }
    return k.ready_cached;
  }

  void on_task_done(task& t) {
    ++events_;
    if (opt_.trace) trace_.push_back({steps_, t.id, t.cta, "exit", t.name, ""});
    bool last = true;
    for (auto& o : tasks_)
      if (o->cta == t.cta && slots_[size_t(o->id)].status != state::done) last = false;
    touch(cta_object(t.cta), last ? access::write : access::update);
    if (last) exited_.insert(t.cta);
  }

  size_t live_tasks() const {
    size_t n = 0;
    for (auto& t : tasks_) n += slots_[size_t(t->id)].status != state::done;
    return n;
  }

  // Every live task blocked (or, `polling`, only polling barriers whose phase cannot complete):
  // the tasks grouped by what they wait on and where.
  [[noreturn]] void report_deadlock(bool polling = false) {
    std::ostringstream o;
    o << "at step " << steps_
      << (polling ? " no task can make progress: every live task is blocked or polls a barrier in a loop"
                  : " every live task is blocked");
    std::vector<std::pair<std::string, std::vector<int>>> groups;  // "waits on X at loc" -> tasks
    for (auto& t : tasks_) {
      std::string what;
      if (slots_[size_t(t->id)].status == state::blocked)
        what = "wait on " + (t->what_fn ? t->what_fn() : std::string("?"));
      else if (slots_[size_t(t->id)].status != state::done)
        what = t->polls ? "poll (try_wait loop) " + t->polls() : "last at " + t->last;
      else
        continue;
      what += t->loc.at();
      auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
        return g.first == what && tasks_[size_t(g.second[0])]->cta == t->cta;
      });
      if (it == groups.end())
        groups.push_back({what, {t->id}});
      else
        it->second.push_back(t->id);
    }
    for (const auto& [what, ids] : groups) o << "\n  " << tasks_named(ids) << ": " << what;
    throw model_error(error_kind::deadlock, o.str());
  }

  [[noreturn]] void report_step_limit() {
    std::ostringstream o;
    o << "stopped after " << opt_.step_limit << " steps (a task that never ends?)";
    for (auto& t : tasks_) {
      if (slots_[size_t(t->id)].status == state::done) continue;
      o << "\n  " << where(t->id) << " last at " << t->last;
      if (slots_[size_t(t->id)].status == state::blocked && t->what_fn) o << ", waiting on " << t->what_fn();
    }
    throw model_error(error_kind::step_limit, o.str());
  }

  void abort_all() {
    aborting_ = true;
    for (auto& t : tasks_) {
      // A task that swallows the abort and keeps calling the model is resumed a few times at
      // most; its stack is then dropped.
      for (int tries = 0; t->started && slots_[size_t(t->id)].status != state::done && tries < 4; ++tries) {
        current_ = t->id;
        to_task(*t);
        current_ = -1;
      }
      slots_[size_t(t->id)].status = state::done;
      t->stack.reset();
    }
    error_ = nullptr;
    agents_.clear();
  }

  uint64_t next_random() {  // splitmix64: fixed across platforms, so a seed replays anywhere
    uint64_t z = (rng_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  // "0-3, 7, 9-10"
  static std::string ranges(const std::vector<unsigned>& v) {
    std::ostringstream o;
    for (size_t i = 0; i < v.size();) {
      size_t j = i;
      while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
      o << (i ? ", " : "") << v[i];
      if (j > i) o << "-" << v[j];
      i = j + 1;
    }
    return o.str();
  }

  static std::string escape(const std::string& s) {
    std::string r;
    for (char c : s) {
      if (c == '"' || c == '\\') r += '\\';
      if (c == '\n') {
        r += "\\n";
        continue;
      }
      r += c;
    }
    return r;
  }

  run_options opt_;
  uint64_t rng_;
  std::vector<std::unique_ptr<task>> tasks_;
  std::vector<agent> agents_;
  std::vector<int> ready_;                 // the ready set without a slow CTA's tasks (slow_cta)
  std::vector<int> ready_set_;             // the tasks that can run, in id order (see settle)
  std::vector<std::vector<int>> waiters_;  // per key: blocked tasks waiting on it
  std::vector<int> woken_;                 // waiters of keys notified since the last step
  std::vector<int> woken_now_;             // those being settled (kept for its buffer)
  std::vector<int> unkeyed_;               // blocked tasks with no key: checked after any event
  uint64_t unkeyed_epoch_ = ~uint64_t(0);
  std::vector<slot> slots_;  // per task: what every step reads (slot)
  std::set<int> exited_;
  detail::context main_{};
  const void* main_stack_ = nullptr;  // the scheduler's stack, as ASan's fiber interface saw it
  size_t main_stack_size_ = 0;
  int current_ = -1;
  bool running_ = false, ran_ = false, aborting_ = false, exhaustive_ = false;
  uint64_t steps_ = 0;
  uint64_t events_ = 0;         // events of tasks (ticks) and copy-engine actions so far
  std::vector<uint64_t> keys_;  // per key: its notifications so far
  std::exception_ptr error_;
  std::vector<size_t> replay_;
  size_t pos_ = 0;
  unsigned spurious_used_ = 0;  // spurious failures chosen in this exhaustive run
  std::vector<std::pair<size_t, size_t>> made_;
  std::vector<trace_event> trace_;
  step_chooser* chooser_ = nullptr;
  bool in_step_ = false, blocked_ = false;
  uint64_t step_proc_ = 0;              // the process of the step in progress
  std::vector<touch_rec> footprint_;    // what it touched so far
  std::map<uint64_t, uint64_t> posts_;  // per process: actions it posted so far
  struct failed_poll_rec {
    bool pending = false;
    uint64_t obj = 0, key = 0;
    src_loc loc;
  } failed_;                           // the step's failed poll (see failed_poll)
  uint64_t next_poll_ = ~uint64_t(0);  // the poll the task is about to make (see about_to_poll)
  // Two known call sites that are one (an unknown site is no spin loop's).
  static bool same_site(const src_loc& a, const src_loc& b) {
    return a.known() && a.file == b.file && a.line == b.line;
  }
  uint64_t next_object_ = 1;
  struct arrive_rec {
    int task;
    int bar, bar_cta;
    const std::string* bar_name;  // the barrier's own name (the world keeps its barriers to its end)
    const char* op;
    uint64_t phase;
    orders o;
    src_loc loc;
    hb_clock knew;  // the arriving task's clock at the arrive
  };
  struct wait_rec {
    int bar;
    const std::string* bar_name;
    int64_t observed;
    uint32_t parity;
    uint64_t time;  // the waiter's own time after the wait
    src_loc loc;
  };
  // Task t's last kept wait before its time `at` (on barrier `bar`; -1: on any).
  const wait_rec* last_wait(int t, uint64_t at, int bar) const {
    const wait_rec* r = nullptr;
    if (size_t(t) < waits_.size())
      for (const wait_rec& w : waits_[size_t(t)])
        if (w.time <= at && (bar < 0 || w.bar == bar)) r = &w;
    return r;
  }
  static std::string returned_on(int64_t observed) {
    return observed < 0 ? std::string("returned at once on the fresh barrier (the phase before phase 0)")
                        : "returned on phase " + std::to_string(observed);
  }
  std::vector<arrive_rec> arrives_;
  std::vector<std::vector<wait_rec>> waits_;  // per task, its last waits in its order
};

}  // namespace hopper::model
