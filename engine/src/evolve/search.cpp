#include "kf/search.h"

#include "kf/generic.h"
#include "kf/transforms.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <future>
#include <sstream>

namespace kf {

using nlohmann::json;

Search::Search(SearchConfig cfg, std::vector<PatternSource> patterns, SearchHooks hooks)
    : cfg_(std::move(cfg)),
      patterns_(std::move(patterns)),
      hooks_(std::move(hooks)),
      islands_(cfg_.islands),
      router_({"tuner", "crossover", "pattern", "template", "transform", "generic"}),
      rng_(cfg_.seed) {
    experts_.push_back(make_tuner());
    experts_.push_back(make_crossover());
    experts_.push_back(make_pattern_expert());
    experts_.push_back(make_template_expert());
    for (const auto& [dclass, w] : experts_.back()->priors()) router_.set_prior(dclass, "template", w);
    experts_.push_back(make_transform_expert());
    for (const auto& [dclass, w] : experts_.back()->priors()) router_.set_prior(dclass, "transform", w);
    experts_.push_back(make_generic_expert());
    for (const auto& [dclass, w] : experts_.back()->priors()) router_.set_prior(dclass, "generic", w);
    started_ = std::chrono::steady_clock::now();
}

Search::~Search() = default;

void Search::notify(SearchEvent e) {
    if (hooks_.on_event) hooks_.on_event(e);
}

void Search::add_expert(std::shared_ptr<Expert> expert) {
    for (const auto& [dclass, w] : expert->priors()) router_.set_prior(dclass, expert->name(), w);
    router_.add_expert(expert->name());
    experts_.push_back(std::move(expert));
}

void Search::add_seeds(const std::vector<Proposal>& seeds) {
    for (const auto& s : seeds) pending_seeds_.push_back(s);
}

void Search::adopt(const Member& m) {
    tried_.insert(proposal_key(m.source, m.tunables));
    ++evaluations_;
    ++outcomes_[std::string(to_string(m.status))];
    islands_.add(m);
    best_fitness_ = std::max(best_fitness_, m.fitness);
    next_id_ = std::max(next_id_, m.id + 1);
}

void Search::add_pending(const Child& c) {
    tried_.insert(proposal_key(c.proposal.source, c.proposal.tunables));
    next_id_ = std::max(next_id_, c.id + 1);
    pending_children_.push_back(c);
}

bool Search::must_stop(StopReason& why) const {
    if (cfg_.time_limit_s > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count() >= cfg_.time_limit_s) {
        why = StopReason::time_limit(cfg_.time_limit_s);
        return true;
    }
    // Stagnation counts rounds: one round is one child per island.
    int rounds = evals_since_best_ / std::max(1, islands_.islands());
    if (cfg_.stagnation_stop > 0 && rounds >= cfg_.stagnation_stop) {
        why = StopReason::stagnation(rounds);
        return true;
    }
    if ((hooks_.should_stop && hooks_.should_stop()) || (hooks_.control && hooks_.control->stop_requested())) {
        std::optional<StopReason> reason = hooks_.stop_reason ? hooks_.stop_reason() : std::nullopt;
        why = reason.value_or(StopReason::requested());
        return true;
    }
    return false;
}

bool Search::budget_allows(int more) const {
    int committed = evaluations_ + static_cast<int>(in_flight_.size()) + static_cast<int>(async_.size());
    return cfg_.budget <= 0 || committed + more <= cfg_.budget;
}

Member Search::evaluate_into_member(const Child& c, const Diagnosis& d) {
    Member m;
    m.id = c.id;
    m.source = c.proposal.source;
    m.tunables = c.proposal.tunables;
    m.family = c.proposal.family;
    m.expert = c.proposal.expert;
    m.status = d.status;
    m.bound = d.roofline ? d.roofline->bound : "";
    m.fitness = d.fitness();
    m.island = c.island;
    m.generation = c.generation;
    m.parents = c.proposal.parents;
    return m;
}

namespace {

/**
 * The queue used without an asynchronous one: children are evaluated in batches (one per
 * island) through the `evaluate` hook, in the order they were submitted. Deterministic.
 */
class BatchQueue : public EvaluationQueue {
public:
    BatchQueue(std::function<std::vector<Diagnosis>(const std::vector<Child>&)> evaluate, int capacity)
        : evaluate_(std::move(evaluate)), capacity_(std::max(1, capacity)) {}
    int capacity() const override { return capacity_; }
    void submit(const Child& c) override { waiting_.push_back(c); }
    std::optional<std::pair<Child, Diagnosis>> next(std::chrono::milliseconds) override {
        if (done_.empty() && !waiting_.empty()) {
            std::vector<Child> batch(waiting_.begin(), waiting_.end());
            waiting_.clear();
            std::vector<Diagnosis> diags = evaluate_(batch);
            for (std::size_t k = 0; k < batch.size(); ++k) {
                Diagnosis d;
                if (k < diags.size()) d = diags[k];
                else {
                    d.status = Status::RuntimeError;
                    d.message = "the evaluator returned no diagnosis for this child";
                }
                done_.emplace_back(batch[k], d);
            }
        }
        if (done_.empty()) return std::nullopt;
        auto r = done_.front();
        done_.pop_front();
        return r;
    }
    std::vector<Child> cancel_waiting() override {
        std::vector<Child> out(waiting_.begin(), waiting_.end());
        waiting_.clear();
        return out;
    }

private:
    std::function<std::vector<Diagnosis>(const std::vector<Child>&)> evaluate_;
    int capacity_;
    std::deque<Child> waiting_;
    std::deque<std::pair<Child, Diagnosis>> done_;
};

/** The parents to ask for a child, in turn: the tournament's winner first, then the island's other members,
 * fittest first. */
template <class Open>
std::vector<const Member*> parents_in_turn(const Member* chosen, const std::vector<Member>& members, Open open) {
    std::vector<const Member*> parents;
    if (open(*chosen)) parents.push_back(chosen);
    for (const auto& m : members)
        if (&m != chosen && open(m)) parents.push_back(&m);
    if (parents.empty()) return parents;
    std::stable_sort(parents.begin() + (parents.front() == chosen ? 1 : 0), parents.end(),
                     [](const Member* a, const Member* b) { return a->fitness > b->fitness; });
    return parents;
}

/** The expert the router named (the last of that name), or null. */
Expert* expert_named(const std::vector<std::shared_ptr<Expert>>& experts, const std::string& name) {
    Expert* expert = nullptr;
    for (auto& e : experts)
        if (e->name() == name) expert = e.get();
    return expert;
}

/** What an expert called at once reads: the search's own state, through pointers. */
ProposalContext context_now(const SearchConfig& cfg, const Member* parent, const Member* other, DiagnosisClass dclass,
                            const std::vector<PatternSource>& patterns, const std::set<std::string>& tried,
                            SearchRng& rng) {
    ProposalContext ctx;
    ctx.task = cfg.task;
    ctx.backend = cfg.backend;
    ctx.parent = parent;
    ctx.other = other;
    ctx.diagnosis_class = dclass;
    ctx.patterns = &patterns;
    ctx.tried = &tried;
    ctx.rng = &rng;
    return ctx;
}

Child child_of(Proposal p, int island, int generation, const RouteDecision& route, double parent_fitness) {
    Child c;
    c.proposal = std::move(p);
    c.island = island;
    c.generation = generation;
    c.route = route;
    c.parent_fitness = parent_fitness;
    return c;
}

}  // namespace

/** A proposal being written by a blocking expert on its own thread, with the context it reads. */
struct Search::AsyncProposal {
    Expert* expert = nullptr;
    int island = 0;
    int generation = 0;
    RouteDecision route;
    double parent_fitness = 0;
    Member parent, other;
    bool has_other = false;
    nlohmann::json parent_diagnosis, other_diagnosis;
    std::vector<Member> inspirations;
    std::vector<std::string> notes;
    std::string refusal;
    std::atomic<bool> written{false};  ///< the expert has answered (result is about to be ready)
    std::future<std::optional<Proposal>> result;

    /** Asks `asked` for a child of `of` (and `with`) on a thread of its own, with what it reads copied now. */
    static std::unique_ptr<AsyncProposal> ask(const Search& search, Expert* asked, int on_island,
                                              const RouteDecision& chosen_route, const Member& of, const Member* with,
                                              DiagnosisClass dclass);

private:
    /** The expert's call, on its thread; however it ends, `written` is set and `wake` notified. */
    std::optional<Proposal> write(const Task* task, Backend backend, const std::vector<PatternSource>* patterns,
                                  DiagnosisClass dclass, Wakeup* wake);
};

std::unique_ptr<Search::AsyncProposal> Search::AsyncProposal::ask(const Search& search, Expert* asked, int on_island,
                                                                  const RouteDecision& chosen_route, const Member& of,
                                                                  const Member* with, DiagnosisClass dclass) {
    auto a = std::make_unique<AsyncProposal>();
    a->expert = asked;
    a->island = on_island;
    a->generation = search.islands_.generation(on_island) + 1;
    a->route = chosen_route;
    a->parent = of;
    a->parent_fitness = of.fitness;
    if (with) {
        a->other = *with;
        a->has_other = true;
    }
    if (search.hooks_.diagnosis_of) {
        a->parent_diagnosis = search.hooks_.diagnosis_of(of.id);
        if (with) a->other_diagnosis = search.hooks_.diagnosis_of(with->id);
    }
    for (int j = 0; j < search.islands_.islands(); ++j)
        if (j != on_island)
            if (const Member* b = search.islands_.best(j); b && b->fitness > 0) a->inspirations.push_back(*b);
    if (search.hooks_.library_notes) a->notes = search.hooks_.library_notes(dclass);
    AsyncProposal* raw = a.get();
    const Task* task = search.cfg_.task;
    Backend backend = search.cfg_.backend;
    const std::vector<PatternSource>* patterns = &search.patterns_;
    std::shared_ptr<Wakeup> wake = search.wake_;
    raw->result =
        std::async(std::launch::async, [raw, task, backend, patterns, dclass, wake]() -> std::optional<Proposal> {
            return raw->write(task, backend, patterns, dclass, wake.get());
        });
    return a;
}

std::optional<Proposal> Search::AsyncProposal::write(const Task* task, Backend backend,
                                                     const std::vector<PatternSource>* patterns, DiagnosisClass dclass,
                                                     Wakeup* wake) {
    // However the expert ends, the search hears of it at once.
    struct Answered {
        AsyncProposal* a;
        Wakeup* w;
        ~Answered() {
            a->written = true;
            w->notify();
        }
    } answered{this, wake};
    ProposalContext ctx;
    ctx.task = task;
    ctx.backend = backend;
    ctx.parent = &parent;
    ctx.other = has_other ? &other : nullptr;
    ctx.diagnosis_class = dclass;
    ctx.patterns = patterns;
    ctx.parent_diagnosis = parent_diagnosis.is_null() ? nullptr : &parent_diagnosis;
    ctx.other_diagnosis = other_diagnosis.is_null() ? nullptr : &other_diagnosis;
    for (const auto& m : inspirations) ctx.inspirations.push_back(&m);
    ctx.library_notes = &notes;
    try {
        auto p = expert->propose(ctx);
        if (!p) refusal = expert->refusal();
        return p;
    } catch (const std::exception& e) {
        refusal = std::string("failed: ") + e.what();
        return std::nullopt;
    }
}

Search::ProposeOutcome Search::propose_for_island(int i, std::deque<Child>& ready) {
    const Member* chosen = islands_.select(i, rng_);
    if (!chosen) return ProposeOutcome::Nothing;
    // The tournament's winner first; when no expert can do anything more with it, the
    // island's other members, fittest first, so that the space is only called exhausted
    // when it really is.
    // A failed parent whose repairs keep failing is abandoned, not tuned for ever; one whose
    // repairs in flight could already use up its tries waits for their results.
    auto open = [this](const Member& m) {
        if (abandoned_.count(m.id)) return false;
        if (!is_failure(diagnosis_class(m))) return true;
        auto f = failed_repairs_.find(m.id);
        auto p = repairs_in_flight_.find(m.id);
        return (f == failed_repairs_.end() ? 0 : f->second) + (p == repairs_in_flight_.end() ? 0 : p->second) < kMaxFailedRepairs;
    };
    std::vector<const Member*> parents = parents_in_turn(chosen, islands_.members(i), open);
    if (parents.empty()) return ProposeOutcome::Nothing;
    const auto& favoured = cfg_.island_experts.empty()
                               ? std::vector<std::string>{}
                               : cfg_.island_experts[static_cast<std::size_t>(i) % cfg_.island_experts.size()];
    for (const Member* parent : parents) {
        const DiagnosisClass dclass = diagnosis_class(*parent);
        std::vector<std::string> allowed = router_.experts();
        // Ask the router; an expert that refuses (or is busy) is taken out for this parent.
        while (!allowed.empty()) {
            RouteDecision route = router_.choose(dclass, favoured, allowed);
            Expert* expert = expert_named(experts_, route.expert);
            const Member* other = nullptr;
            if (route.expert == "crossover") {
                if (auto pair = islands_.select_pair(i, rng_)) {
                    parent = pair->first;
                    other = pair->second;
                }
            }
            if (expert && expert->blocking()) {
                // One call at a time per blocking expert; the others keep the queue fed meanwhile.
                bool busy = std::any_of(async_.begin(), async_.end(), [&](const auto& a) { return a->expert == expert; });
                if (!busy) {
                    async_.push_back(AsyncProposal::ask(*this, expert, i, route, *parent, other, dclass));
                    return ProposeOutcome::Started;
                }
            } else if (expert) {
                std::optional<Proposal> p =
                    expert->propose(context_now(cfg_, parent, other, dclass, patterns_, tried_, rng_));
                if (p) {
                    tried_.insert(proposal_key(p->source, p->tunables));
                    Child c = child_of(std::move(*p), i, islands_.generation(i) + 1, route, parent->fitness);
                    note_repair_in_flight(c);
                    ready.push_back(std::move(c));
                    return ProposeOutcome::Proposed;
                }
                if (parent == chosen)
                    notify({EventKind::Refused, i, parent->id, route.expert + ": " + expert->refusal(), {}});
            }
            allowed.erase(std::remove(allowed.begin(), allowed.end(), route.expert), allowed.end());
        }
    }
    return ProposeOutcome::Nothing;
}

void Search::note_repair_in_flight(const Child& c) {
    if (!c.proposal.parents.empty() && c.route.diagnosis_class && is_failure(*c.route.diagnosis_class))
        ++repairs_in_flight_[c.proposal.parents.front()];
}

Search::ProposeOutcome Search::propose_one(std::deque<Child>& ready) {
    // Islands take turns; an island with nothing to propose passes its turn on.
    for (int k = 0; k < islands_.islands(); ++k) {
        int i = (next_island_ + k) % islands_.islands();
        ProposeOutcome o = propose_for_island(i, ready);
        if (o != ProposeOutcome::Nothing) {
            next_island_ = (i + 1) % islands_.islands();
            return o;
        }
    }
    return ProposeOutcome::Nothing;
}

void Search::collect_async(std::deque<Child>& ready, bool wait) {
    for (auto it = async_.begin(); it != async_.end();) {
        AsyncProposal& a = **it;
        if (!wait && !a.written) {
            ++it;
            continue;
        }
        std::optional<Proposal> p = a.result.get();
        if (p) {
            std::string key = proposal_key(p->source, p->tunables);
            if (tried_.count(key)) {
                ++fruitless_;
                notify({EventKind::Refused, a.island, a.parent.id,
                        a.expert->name() + ": proposed a kernel already evaluated", {}});
            } else {
                fruitless_ = 0;
                tried_.insert(key);
                Child c;
                c.proposal = std::move(*p);
                c.island = a.island;
                c.generation = a.generation;
                c.route = a.route;
                c.parent_fitness = a.parent_fitness;
                note_repair_in_flight(c);
                ready.push_back(std::move(c));
            }
        } else {
            ++fruitless_;
            notify({EventKind::Refused, a.island, a.parent.id, a.expert->name() + ": " + a.refusal, {}});
            // A refusal is a failed try for the router, so that it learns to ask someone else.
            if (a.route.diagnosis_class) router_.reward(*a.route.diagnosis_class, a.expert->name(), 0.0);
        }
        it = async_.erase(it);
    }
}

void Search::process_result(const Child& c, const Diagnosis& d) {
    if (hooks_.on_result) hooks_.on_result(c, d);
    Member m = evaluate_into_member(c, d);
    ++evaluations_;
    const std::string status(to_string(m.status));
    ++outcomes_[status];
    if (c.proposal.expert == "seed") {
        islands_.add(m);
        if (m.fitness > best_fitness_) best_fitness_ = m.fitness;
        SearchEvent seeded(EventKind::Seeded, m.island, m.id, m.family + ": " + d.message,
                           {{"fitness", m.fitness}, {"status", status}});
        seeded.status = m.status;
        notify(std::move(seeded));
        return;
    }
    double gain = c.parent_fitness > 0 ? m.fitness / c.parent_fitness : (m.fitness > 0 ? 2.0 : 0.0);
    bool has_parent = !c.proposal.parents.empty();
    const bool repair = c.route.diagnosis_class && is_failure(*c.route.diagnosis_class);
    if (has_parent && !c.route.expert.empty() && c.route.diagnosis_class) {
        // A child of a failed parent is rewarded for becoming correct, not for a speedup.
        if (repair) router_.reward_repair(*c.route.diagnosis_class, c.proposal.expert, m.status == Status::Ok);
        else router_.reward(*c.route.diagnosis_class, c.proposal.expert, gain);
    }
    if (has_parent && repair) {
        auto f = repairs_in_flight_.find(c.proposal.parents.front());
        if (f != repairs_in_flight_.end() && --f->second <= 0) repairs_in_flight_.erase(f);
    }
    if (has_parent && repair && m.status != Status::Ok) {
        std::int64_t parent = c.proposal.parents.front();
        // The failed child carries its parent's count: a chain of failed repairs of failed
        // repairs ends too, not only each parent's own children.
        const int failures = ++failed_repairs_[parent];
        failed_repairs_[m.id] = failures;
        if (failures >= kMaxFailedRepairs) abandoned_.insert(m.id);
        if (failures >= kMaxFailedRepairs && abandoned_.insert(parent).second)
            notify({EventKind::Log, c.island, parent,
                    "abandoned failed candidate " + std::to_string(parent) + " after " + std::to_string(kMaxFailedRepairs) +
                        " children that did not repair it",
                    {}});
    }
    bool island_best = islands_.add(m);
    SearchEvent evaluated(
        EventKind::Evaluated, c.island, m.id,
        status + (m.fitness > 0 ? " " + std::to_string(m.fitness) + "x" : std::string()),
            {{"fitness", m.fitness},
             {"status", status},
             {"gain", gain},
             {"expert", c.proposal.expert},
             {"family", c.proposal.family},
             {"parent_class", c.route.diagnosis_class ? std::string(to_string(*c.route.diagnosis_class)) : std::string()},
             {"rationale", c.proposal.rationale},
             {"has_parent", has_parent}});
    evaluated.status = m.status;
    notify(std::move(evaluated));
    if (island_best) {
        char text[64];
        std::snprintf(text, sizeof text, "new island best %.3gx", m.fitness);
        notify({EventKind::Improved, c.island, m.id, text, {{"fitness", m.fitness}}});
    }
    if (m.fitness > best_fitness_) {
        best_fitness_ = m.fitness;
        evals_since_best_ = 0;
    } else {
        ++evals_since_best_;
    }
    islands_.end_generation(c.island);
    if (islands_.migration_due())
        for (const auto& mig : islands_.migrate())
            notify({EventKind::Migrated, mig.to, mig.member.id,
                    "island " + std::to_string(mig.from) + " -> " + std::to_string(mig.to),
                    {{"fitness", mig.member.fitness}}});
}

namespace {

// The loop sleeps until something happens: a result, an expert's answer, a stop, pause or
// injection. Stop predicates that are plain functions (should_stop) cannot wake it; they
// are polled at least every kPollInterval.
constexpr auto kPollInterval = std::chrono::milliseconds(200);

/** Takes the search's wakeup back from the queue and the run control when a run ends. */
struct Unhook {
    EvaluationQueue* queue;
    RunControl* control;
    ~Unhook() {
        queue->notify_results(nullptr);
        if (control) control->set_wakeup(nullptr);
    }
};

}  // namespace

/** One call of run(): the queue it submits to, the children to submit before any new proposal, where it stands. */
struct Search::RunLoop {
    RunLoop(Search& s, EvaluationQueue& q) : search(s), queue(q) {}

    /** Children lost in flight by a killed run first, then the seeds, spread over the islands. */
    void take_pending();
    /** Runs until a stop, a spent budget or an exhausted space; `why` then says which. */
    void until_stopped();

    Search& search;
    EvaluationQueue& queue;
    bool queue_wakes = false;  ///< the queue wakes the loop when a result comes
    std::deque<Child> ready;
    StopReason why;
    bool stopping = false, exhausted = false, was_paused = false;

private:
    void submit(Child c);
    /** Stops proposing; what waits is dropped: it stays in the store unevaluated and is resumed later. */
    void stop();
    /** Submits the user's injections and the experts' answers, and keeps the queue full of new proposals. */
    void feed(bool paused);
    /** With nothing in flight: whether the run ends (after waiting out a pause, it goes on). */
    bool ends_when_idle(bool paused);
    /** Takes the next result from the queue, waiting for it at most kPollInterval, and processes it. */
    void take_result(std::uint64_t seen);
};

void Search::RunLoop::take_pending() {
    for (auto& c : search.pending_children_) ready.push_back(std::move(c));
    search.pending_children_.clear();
    for (std::size_t k = 0; k < search.pending_seeds_.size(); ++k) {
        Proposal& s = search.pending_seeds_[k];
        std::string key = proposal_key(s.source, s.tunables);
        if (search.tried_.count(key)) continue;
        search.tried_.insert(key);
        Child c;
        c.proposal = s;
        c.island = static_cast<int>(k % static_cast<std::size_t>(search.islands_.islands()));
        ready.push_back(std::move(c));
    }
    search.pending_seeds_.clear();
}

void Search::RunLoop::submit(Child c) {
    if (c.id == 0 && search.hooks_.on_child) search.hooks_.on_child(c);
    if (c.id == 0) c.id = search.next_id_++;
    else search.next_id_ = std::max(search.next_id_, c.id + 1);
    if (c.proposal.expert != "seed")
        search.notify({EventKind::Proposed, c.island, c.id, c.route.reason + " -> " + c.proposal.rationale,
                       {{"expert", c.proposal.expert}, {"route", c.route.reason}}});
    search.in_flight_[c.id] = c;
    queue.submit(c);
}

void Search::RunLoop::until_stopped() {
    while (true) {
        const std::uint64_t seen = search.wake_->generation();
        if (!stopping && search.must_stop(why)) stop();
        bool paused = !stopping && search.hooks_.control && search.hooks_.control->paused();
        if (paused != was_paused) {
            search.notify({paused ? EventKind::Paused : EventKind::Resumed, -1, 0, paused ? "paused" : "resumed", {}});
            was_paused = paused;
        }
        if (!stopping) feed(paused);
        if (search.in_flight_.empty() && search.async_.empty()) {
            if (ends_when_idle(paused)) break;
            continue;
        }
        if (search.in_flight_.empty()) {
            // Only blocking experts are at work: sleep until one of them answers.
            search.wake_->wait(seen, kPollInterval);
            continue;
        }
        take_result(seen);
    }
}

void Search::RunLoop::stop() {
    stopping = true;
    for (const Child& c : queue.cancel_waiting()) search.in_flight_.erase(c.id);
    for (auto& a : search.async_) a->result.wait();
    search.async_.clear();
}

void Search::RunLoop::feed(bool paused) {
    if (search.hooks_.control)
        for (auto& inj : search.hooks_.control->take_injections()) {
            Child c;
            c.proposal = std::move(inj.proposal);
            if (c.proposal.expert.empty()) c.proposal.expert = "user";
            c.island = std::clamp(inj.island, 0, search.islands_.islands() - 1);
            c.generation = search.islands_.generation(c.island) + 1;
            c.route.reason = "written by the user";
            search.tried_.insert(proposal_key(c.proposal.source, c.proposal.tunables));
            submit(std::move(c));  // the user's own kernels skip the budget and the queue
        }
    search.collect_async(ready, false);
    exhausted = false;
    // Experts that keep answering with nothing new (a kernel already evaluated, or a
    // refusal) are asked no more: the space counts as exhausted once they are done.
    const bool fruitless = search.cfg_.max_fruitless > 0 && search.fruitless_ >= search.cfg_.max_fruitless;
    if (fruitless) exhausted = true;
    while (!fruitless && !paused &&
           static_cast<int>(search.in_flight_.size() + search.async_.size()) < queue.capacity() &&
           search.budget_allows(1)) {
        if (!ready.empty()) {
            Child c = std::move(ready.front());
            ready.pop_front();
            submit(std::move(c));
            continue;
        }
        if (search.propose_one(ready) == ProposeOutcome::Nothing) {
            exhausted = true;
            break;
        }
    }
}

bool Search::RunLoop::ends_when_idle(bool paused) {
    if (stopping) return true;
    if (paused) {
        search.hooks_.control->wait_while_paused();
        return false;
    }
    if (!ready.empty() && search.budget_allows(1)) return false;
    if (!search.budget_allows(1)) {
        why = StopReason::evaluation_budget(search.cfg_.budget);
        return true;
    }
    if (search.must_stop(why)) return true;  // e.g. experts that refused because a budget ran out
    if (exhausted) {
        why = StopReason::exhausted();
        return true;
    }
    return false;
}

void Search::RunLoop::take_result(std::uint64_t seen) {
    auto res = queue.next(std::chrono::milliseconds(0));
    if (!res) {
        if (queue_wakes) {
            search.wake_->wait(seen, kPollInterval);
            return;
        }
        res = queue.next(kPollInterval);
        if (!res) return;
    }
    search.in_flight_.erase(res->first.id);
    search.process_result(res->first, res->second);
    if (search.hooks_.on_batch_done) search.hooks_.on_batch_done();
}

SearchResult Search::run() {
    SearchResult result;
    std::shared_ptr<EvaluationQueue> queue = hooks_.queue;
    if (!queue) queue = std::make_shared<BatchQueue>(hooks_.evaluate, islands_.islands());
    RunLoop loop(*this, *queue);
    loop.take_pending();
    loop.queue_wakes = queue->notify_results(wake_);
    if (hooks_.control) hooks_.control->set_wakeup(wake_);
    Unhook unhook{queue.get(), hooks_.control};
    loop.until_stopped();
    result.stop_reason = loop.why;
    result.evaluations = evaluations_;
    result.outcomes = outcomes_;
    if (const Member* b = islands_.best()) result.best = *b;
    SearchEvent stopped(EventKind::Stopped, -1, 0, to_string(loop.why),
                        {{"evaluations", evaluations_}, {"pipeline", queue->stats()}});
    stopped.stop = loop.why;
    notify(std::move(stopped));
    return result;
}

json Search::state() const {
    std::ostringstream rng;
    rng << rng_;
    return {{"islands", islands_.to_json()},
            {"router", router_.to_json()},
            {"rng", rng.str()},
            {"next_id", next_id_},
            {"evaluations", evaluations_},
            {"evals_since_best", evals_since_best_},
            {"in_flight", [this] {
                 json ids = json::array();
                 for (const auto& [id, c] : in_flight_) ids.push_back(id);
                 return ids;
             }()},
            {"best_fitness", best_fitness_},
            {"failed_repairs", failed_repairs_},
            {"abandoned", abandoned_},
            {"outcomes", outcomes_},
            {"tried", tried_}};
}

void Search::restore(const json& s) {
    islands_ = IslandModel::from_json(s.at("islands"));
    router_.load_stats(s.at("router"));
    std::istringstream rng(s.value("rng", ""));
    rng >> rng_;
    next_id_ = s.value("next_id", std::int64_t{1});
    evaluations_ = s.value("evaluations", 0);
    evals_since_best_ = s.value("evals_since_best", 0);
    best_fitness_ = s.value("best_fitness", 0.0);
    outcomes_ = s.value("outcomes", std::map<std::string, int>{});
    tried_ = s.value("tried", std::set<std::string>{});
    failed_repairs_.clear();
    if (s.contains("failed_repairs") && s["failed_repairs"].is_array())
        for (const auto& pr : s["failed_repairs"]) failed_repairs_[pr.at(0).get<std::int64_t>()] = pr.at(1).get<int>();
    abandoned_ = s.value("abandoned", std::set<std::int64_t>{});
    pending_seeds_.clear();
}

}  // namespace kf
